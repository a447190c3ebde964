/* fencectl's background processes: spawn, show processes, kill. */
#ifndef CTL_PROCS_H
#define CTL_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "parser.h"

struct imsg;
struct imsgbuf;

int	 ctl_procs_request(const struct parse_result *, uint32_t *, void **,
	    size_t *);
void	 ctl_proc(enum ctl_action, struct imsg *, int *);

/* fencectl.c: all of p to fd, or exit. */
void	 ctl_write_all(int, const uint8_t *, size_t);
void	 ctl_wait(struct imsgbuf *, struct imsg *, int);
int	 ctl_connect(const char *);

/* ctl_doctor.c: a row of fencectl doctor; 1: the default fails. */
struct imsg;
int	 ctl_doctor_print(struct imsg *, int *);

/* ctl_text.c: text a fence chose, printed with no control in it. */
void	 ctl_safe(FILE *, const char *);
void	 ctl_safe_n(FILE *, const void *, size_t);
void	 ctl_error(const char *, const char *);
void	 ctl_denials(const char *, uint32_t, int);

/* ctl_env.c: show environment's times and verdicts. */
void	 ctl_when(const char *, int64_t, time_t);
void	 ctl_boundary(const char *);

/* ctl_term.c */
int	 ctl_term(const char *, int, char *[]);
int	 ctl_input(const char *, int, char *[]);
int	 ctl_follow(const char *, int, char *[]);
/* ctl_forward.c */
int	 ctl_forward(const char *, const struct parse_result *);

#endif /* CTL_PROCS_H */
