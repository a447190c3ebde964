/* fencectl's background processes: spawn, show processes, kill. */
#ifndef CTL_PROCS_H
#define CTL_PROCS_H

#include <stddef.h>
#include <stdint.h>

#include "parser.h"

struct imsg;

int	 ctl_procs_request(const struct parse_result *, uint32_t *, void **,
	    size_t *);
void	 ctl_proc(enum ctl_action, struct imsg *, int *);

/* fencectl.c: all of p to fd, or exit. */
void	 ctl_write_all(int, const uint8_t *, size_t);

#endif /* CTL_PROCS_H */
