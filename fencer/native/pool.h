/*
 * The warm pool of native fences (pool.c, docs/pool.md): the native
 * backend's fb_warm_* hooks (started with the fencer, reloaded, refilled
 * after a boot, stopped with it), fed by its fb_child, taken from by its
 * boots.
 */
#ifndef POOL_H
#define POOL_H

#include <sys/types.h>
#include <stddef.h>

struct fence_spec;
struct fence_proc;

void	pool_start(void);
void	pool_fini(void);
int	pool_reaped(pid_t);
void	pool_kick(void);
void	pool_configured(void);
int	pool_take(const struct fence_spec *, struct fence_proc *, char *,
	    size_t);

#endif /* POOL_H */
