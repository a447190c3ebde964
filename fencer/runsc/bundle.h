/*
 * The OCI bundle of one runsc fence (bundle.c): what docs/design.md section 3
 * asks of a gVisor fence, written from code, one function deciding every
 * field so that a unit test can read them back one by one.
 */
#ifndef RUNSC_BUNDLE_H
#define RUNSC_BUNDLE_H

#include <sys/types.h>
#include <limits.h>
#include <stdint.h>

#include <jansson.h>

#include "fenced.h"

#define RUNSC_ID_LEN		32	/* hex digits of a container id */
#define RUNSC_ID_SIZE		(RUNSC_ID_LEN + 1)
#define RUNSC_TMP_SIZE		(256ULL << 20)	/* the private /tmp */
#define RUNSC_CPU_PERIOD	100000		/* us */
/*
 * The host tasks of a sandbox (the sentry's threads, the ptrace
 * platform's stubs) count against its pids cgroup, not only the fence's
 * processes: measured, the sandbox itself takes 60, and 150 processes
 * in it (exec_test:concurrent) more than 2304.  The host limit is the
 * fence's times RUNSC_PIDS_FACTOR plus RUNSC_PIDS_OVERHEAD
 * (docs/runsc.md).
 */
#define RUNSC_PIDS_FACTOR	16
#define RUNSC_PIDS_OVERHEAD	256

/* What the bundle is made of; every path absolute, checked by the caller. */
struct runsc_bundle_spec {
	char		 rb_key[FENCE_KEY_SIZE];	/* the hostname */
	uid_t		 rb_uid;			/* never 0 */
	gid_t		 rb_gid;
	char		 rb_user[FENCED_NAME_MAX];	/* /home/<user> */
	const char	*rb_home;		/* host path, read-write */
	const char	*rb_bindir;		/* host dir of fence-agent etc. */
	const char	*rb_init;		/* program name in rb_bindir */
	const char	*rb_cgroups_path;	/* linux.cgroupsPath; NULL: none,
						   and no resources (v2) */
	struct fence_limits rb_limits;
	int		 rb_swap;		/* v1 counts swap: memory and
						   swap at the memory limit */

	/* Test-only weakening (FENCED_TEST_HOOKS builds); 0 normally. */
	int		 rb_test_hostmount;	/* bind the host's /var ro */
	int		 rb_test_cap;		/* give CAP_NET_RAW */
};

/*
 * The host paths the bundle binds read-only, for the child that runs
 * runsc to make read-only mounts of in a mount namespace of its own:
 * the gofer of this runsc binds them as they are, read-write in the
 * host kernel's eyes, and leaves "ro" to itself and the sentry.
 */
#define RUNSC_RO_MAX		16
struct runsc_ro_binds {
	char		 rr_path[RUNSC_RO_MAX][PATH_MAX];
	int		 rr_n;
};

void	 runsc_limits(const struct fence_limits *, uint64_t *, uint64_t *);
int	 runsc_id_new(char [RUNSC_ID_SIZE]);
int	 runsc_id_valid(const char *);
json_t	*runsc_bundle_config(const struct runsc_bundle_spec *, char *,
	    size_t);
int	 runsc_bundle_ro_binds(json_t *, struct runsc_ro_binds *, char *,
	    size_t);
int	 runsc_bundle_write(const char *, const struct runsc_bundle_spec *,
	    struct runsc_ro_binds *, char *, size_t);
int	 runsc_bundle_remove(const char *);

/* runsc_parse.c: runsc's answers and the host's account of runsc */
long	 runsc_version_date(const char *, char *, size_t);
int	 runsc_panic_line(const char *, char *, size_t);
pid_t	 runsc_state_pid(const char *);
pid_t	 runsc_status_ppid(const char *);
int	 runsc_pids_parse(char *, pid_t *, int, int);

#endif /* RUNSC_BUNDLE_H */
