/*
 * lockdown(): the one call with which a fenced process gives up what it
 * does not need, in the order pledge(2)-like confinement wants it:
 * process title, chroot, groups and ids, capabilities, no_new_privs,
 * and last the seccomp filter.  Any step that fails is fatal.
 */
#ifndef LOCKDOWN_H
#define LOCKDOWN_H

#include <sys/types.h>
#include <sys/capability.h>
#include <stddef.h>

enum lockdown_filter {
	LOCKDOWN_ALLOW = 1,	/* allowlist from promises; else kill */
	LOCKDOWN_DENY		/* fencer: refuse only what nothing may do */
};

struct lockdown {
	const char		*ld_title;	/* "broker": setproctitle */
	const char		*ld_chroot;	/* NULL: no chroot */
	uid_t			 ld_uid;	/* (uid_t)-1: keep root */
	gid_t			 ld_gid;
	const char		*ld_promises;	/* LOCKDOWN_ALLOW only */
	const cap_value_t	*ld_caps;	/* capabilities kept */
	size_t			 ld_ncaps;
	enum lockdown_filter	 ld_filter;
};

void	lockdown(const struct lockdown *);
void	lockdown_give_up(cap_value_t);
int	lockdown_filter_load(enum lockdown_filter, const char *);

/*
 * Set when the daemon runs with seccomp failures logged instead of
 * killing (a debugging aid, never the default).
 */
extern int lockdown_log_only;

#endif /* LOCKDOWN_H */
