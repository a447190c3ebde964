/*
 * Internals of the cgroup module (cg.h), shared by cg.c, cg_daemon.c,
 * cg_v1.c and cg_v2.c; nothing else includes this.
 */
#ifndef CG_IMPL_H
#define CG_IMPL_H

#include <sys/types.h>
#include <stdint.h>

#include "cg.h"

#define CG_CPU_PERIOD	100000		/* us */
#define CG_RMDIR_TRIES	2000		/* 1 ms apart */

/*
 * A file of a version that counts something of a fence (cg_fence_usage):
 * its controller, its name, the key of its line (NULL: the whole file
 * is the number), which value it is, and how many of the file's units
 * make one of the value's.  A table ends with uf_ctrl -1.
 */
struct cg_usage_file {
	int		 uf_ctrl;
	const char	*uf_file;
	const char	*uf_key;
	uint32_t	 uf_bit;	/* CG_USAGE_* */
	uint64_t	 uf_div;
};

/* cg.c */
int	cg_write(const char *, const char *, const char *, char *, size_t);
int	cg_has(const char *, const char *);
int	cg_mkdir(const char *, char *, size_t);
int	cg_oom_kills(const char *, const char *);
int	cg_memory_check(const char *, const char *, uint64_t, char *,
	    size_t);
int	cg_kill_dir(const char *, pid_t);
int	cg_read_u64(const char *, const char *, const char *, uint64_t *);
int	cg_rmdir(const char *, char *, size_t);

/* cg_v1.c; cg_v1_limit() and cg_v2_limit(): memory and cpu (cg.c: pids) */
extern const char cg_v1_procs[];
int	cg_v1_limit(int, const char *, const struct fence_limits *, char *,
	    size_t);
void	cg_v1_memsw_raise(const char *, const struct fence_limits *);
int	cg_v1_rename(const char *, const char *, char *, size_t);
int	cg_v1_oom(const char *);
extern const struct cg_usage_file cg_v1_usage[];

/* cg_v2.c */
extern const char cg_v2_procs[];
int	cg_v2_limit(int, const char *, const struct fence_limits *, char *,
	    size_t);
int	cg_v2_enable(const char *, const int [CG_NCTRL], char *, size_t);
int	cg_v2_disable(const char *);
int	cg_v2_kill(const char *);
int	cg_v2_oom(const char *);
extern const struct cg_usage_file cg_v2_usage[];
int	cg_v2_move(const char *, const char *, pid_t, char *, size_t);
int	cg_v2_enter(const char *);
int	cg_v2_only_us(const char *);

#endif /* CG_IMPL_H */
