/*
 * Inside the file engine (fencer_tree.c, the process; fencer_tree_walk.c,
 * the walks): the child's state and what the two files share.
 */
#ifndef FENCER_TREE_IMPL_H
#define FENCER_TREE_IMPL_H

#include <sys/types.h>
#include <limits.h>
#include <stdint.h>
#include <time.h>

#define TREE_ERR_LEN		512
#define TREE_PATH_LEN		1024	/* the path kept for messages */
#define TREE_XATTR_MAX		64	/* user.* attributes per file */
#define TREE_XATTR_SIZE		65536	/* bytes of one value, and of a list */
#define TREE_CHUNK		(8 << 20)	/* copied between two looks */
#define TREE_BUF		(128 << 10)	/* read/write buffer */
#define TREE_EMPTY_PASSES	8	/* rereads of a directory emptied */
#define TREE_RETRIES		3	/* a name that keeps changing type */

/* An entry changed type between two looks: look again. */
#define TREE_AGAIN		1

enum tree_op {
	TREE_OP_COPY,
	TREE_OP_EMPTY,
	TREE_OP_MEASURE
};

/* What was left out, for the log line. */
enum tree_skip {
	TREE_SKIP_SOCKET,
	TREE_SKIP_DEVICE,
	TREE_SKIP_MOUNT,
	TREE_SKIP_XATTR,
	TREE_SKIP_LINKED,	/* not left out: hard links copied apart */
	TREE_SKIP_N
};

/* The child's state. */
struct tree_walk {
	enum tree_op		 tw_op;
	struct tree_bounds	 tw_bounds;
	struct tree_count	 tw_count;
	uint64_t		 tw_seen;	/* entries met, made or not */
	uint64_t		 tw_skipped[TREE_SKIP_N];
	uint64_t		 tw_mnt;	/* the top's mount */
	dev_t			 tw_dst_dev;	/* the destination's top */
	ino_t			 tw_dst_ino;
	uid_t			 tw_uid;
	pid_t			 tw_parent;
	int			 tw_pipe;
	int			 tw_clone;	/* 0: FICLONE does not work */
	int			 tw_cfr;	/* 0: copy_file_range neither */
	struct timespec		 tw_last;	/* last progress message */
	size_t			 tw_pathlen;
	char			 tw_path[TREE_PATH_LEN];
	char			 tw_err[TREE_ERR_LEN];
	char			 tw_link[PATH_MAX + 1];
	char			 tw_list[TREE_XATTR_SIZE];
	char			 tw_val[TREE_XATTR_SIZE];
	char			 tw_buf[TREE_BUF];
};

/* fencer_tree.c */
const char	*tree_op_name(enum tree_op);
void		 tree_progress(struct tree_walk *);

/* fencer_tree_walk.c: 0, or -1 with tw_err set. */
int	tree_fail(struct tree_walk *, int);
int	tree_failx(struct tree_walk *, const char *);
int	tree_mount(int, uint64_t *);
int	tree_top(struct tree_walk *, int, int *);
int	tree_dst_empty(struct tree_walk *, int);
int	tree_dir(struct tree_walk *, int, int, int);
int	tree_empty_dir(struct tree_walk *, int, int);
int	tree_unlock(struct tree_walk *, int, mode_t);

#endif /* FENCER_TREE_IMPL_H */
