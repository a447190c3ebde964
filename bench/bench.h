/* Shared by the benchmarks: timing and the summary of a sample. */
#ifndef BENCH_H
#define BENCH_H

#include <stddef.h>
#include <stdint.h>

uint64_t bench_now_ns(void);
double	 bench_row(const char *, uint64_t *, size_t, double);
void	 bench_section(const char *, const char *);
double	 bench_row_to(const char *, const char *, const char *,
	    const char *, uint64_t *, size_t, double);
double	 bench_row_pct(const char *, const char *, const char *,
	    const char *, uint64_t *, size_t, double);
void	 bench_value(const char *, const char *, const char *,
	    const char *, double);
void	 bench_skip(const char *, const char *, const char *);
size_t	 bench_env_num(const char *, size_t, size_t);
int	 bench_ctl_connect(const char *);
int	 bench_forkexec(char *const []);
struct msg_fence;
struct imsgbuf;
struct imsg;
int	 bench_ctl_call(const char *, uint32_t, void *, size_t,
	    struct msg_fence *);
struct imsgbuf *bench_ctl_send(const char *, uint32_t, void *, size_t,
	    int *);
void	 bench_ctl_next(struct imsgbuf *, int, struct imsg *, int);
void	 bench_ctl_close(struct imsgbuf *, int);

#endif
