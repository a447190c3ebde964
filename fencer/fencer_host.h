/*
 * The host's reading of a fence's pid 1 (fencer_host.c): the parsers
 * are separate from the reading so that the regress suite can feed them
 * hostile text.
 */
#ifndef FENCER_HOST_H
#define FENCER_HOST_H

#include <sys/types.h>
#include <stdint.h>

struct probe_host;

#define HOST_FILE_MAX		(64 * 1024)	/* one file of pid 1 */
#define HOST_MOUNTS_MAX		4096		/* lines of pid 1's mountinfo */
/*
 * The fencer's own mountinfo is the host's table, as large as the host
 * makes it (a Kubernetes node: tens of thousands of mounts); read whole
 * into memory grown as it fills, within these bounds, far above any
 * real host's (docs/probe.md).
 */
#define HOST_SELF_MOUNTS_MAX	(32 * 1024 * 1024)	/* its bytes */
#define HOST_SELF_LINES_MAX	(256 * 1024)		/* its mounts */
#define HOST_ALLOW_MAX		32		/* expected host binds */
#define HOST_UIDMAP_MAX		(16 * 1024)	/* the fencer's uid_map */

struct host_status {
	uint32_t	 hs_uid[4];
	uint32_t	 hs_nspid_depth;
	uint32_t	 hs_nspid_last;
	int		 hs_nnp;
	int		 hs_seccomp;
	uint32_t	 hs_filters;
	uint64_t	 hs_cap[4];	/* enum probe_host_cap */
};

struct host_mount {
	uint32_t	 hm_id;
	uint32_t	 hm_parent;
	uint32_t	 hm_major;
	uint32_t	 hm_minor;
	const char	*hm_root;	/* in its filesystem, unescaped; only
					   the host's may be other than a path
					   ("net:[4026532001]", nsfs) */
	const char	*hm_point;	/* as the reader's root sees it */
	int		 hm_ro;
};

/*
 * What the fencer expects to find bound from the host (exact paths),
 * and the host directory the root of the table may be, read-only (""
 * none: the root must be a filesystem of the fence's own).
 */
struct host_allow {
	char		 ha_path[HOST_ALLOW_MAX][PATH_MAX];
	int		 ha_n;
	char		 ha_root[PATH_MAX];
};

/* The fencer's own mount table, read whole (host_self_read). */
struct host_table {
	char			*ht_buf;	/* the text, cut up */
	struct host_mount	*ht_m;
	int			 ht_n;
};

/* host_mounts_parse: whose table */
#define HOST_MOUNTS_FENCE	0	/* a fence's: every root a path */
#define HOST_MOUNTS_HOST	1	/* the host's own: any root */

ssize_t	host_read_file(const char *, char *, size_t);
char	*host_read_grow(const char *, size_t, size_t *);
int	host_status_parse(char *, struct host_status *, char *, size_t);
int	host_mounts_parse(char *, struct host_mount *, int, int, char *,
	    size_t);
int	host_self_read(const char *, struct host_table *, char *, size_t);
void	host_table_free(struct host_table *);
void	host_mounts_judge(const struct host_mount *, int,
	    const struct host_mount *, int, const char *const *, int,
	    const char *, struct probe_host *);
uint32_t host_mounts_nhost(const struct host_mount *, int,
	    const struct host_mount *, int);
int	host_uidmap_parse(char *, const char *, int *, int *, char *,
	    size_t);
int	host_netdev_parse(char *, struct probe_host *, char *, size_t);

/*
 * Read the files of procs (status, uid_map, net) and files (mountinfo:
 * where the fence's files come from; the same pid but for runsc) and
 * fill the reading in; canary: the listener's inode.
 */
void	host_read(pid_t, pid_t, uint64_t, const struct host_allow *,
	    struct probe_host *);

#endif /* FENCER_HOST_H */
