/*
 * The file engine of snapshots (docs/snapshots.md, "The file engine"):
 * copy, empty and measure a directory tree as a given uid, in a child
 * process that has taken that uid and nothing else before it reads a
 * byte of the tree.  A home is filled by a hostile fence and a hostile
 * owner; root never opens, reads or writes a name in it.
 */
#ifndef FENCER_TREE_H
#define FENCER_TREE_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#define TREE_DEPTH_MAX	256		/* directories below the top */

struct tree_bounds {
	uint64_t	 tb_bytes;	/* most bytes (sum of st_size of
					   regular files and symlinks), 0:
					   none */
	uint64_t	 tb_files;	/* most entries (every file, dir,
					   link), 0: none */
};

struct tree_count {
	uint64_t	 tc_bytes;	/* sum of st_size as above */
	uint64_t	 tc_disk;	/* st_blocks * 512 of what was made */
	uint64_t	 tc_files;	/* entries made */
	uint64_t	 tc_shared;	/* bytes shared with the source by
					   FICLONE (reflink) */
};

/*
 * Copy everything below directory srcfd into directory dstfd (empty),
 * as uid:gid; the descriptors may be O_PATH.  0 and *count filled, or
 * -1 with err saying why, for the log and the user.  Blocks until done.
 */
int	tree_copy(int, int, uid_t, gid_t, const struct tree_bounds *,
	    struct tree_count *, char *, size_t);
/* Remove everything below directory dirfd (not dirfd itself), as uid:gid. */
int	tree_empty(int, uid_t, gid_t, char *, size_t);
/* What tree_copy would count, as uid:gid, copying nothing; bounds apply. */
int	tree_measure(int, uid_t, gid_t, const struct tree_bounds *,
	    struct tree_count *, char *, size_t);

/*
 * Seconds a child may go without a sign of progress before it is killed
 * and its operation fails (a child its uid stopped, a filesystem that
 * never answers).  Tests shorten it.
 */
extern unsigned int tree_stall_seconds;

#endif /* FENCER_TREE_H */
