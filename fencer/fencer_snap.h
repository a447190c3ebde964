/*
 * Snapshots of homes, branches, undo (fencer_snap.c, docs/snapshots.md).
 */
#ifndef FENCER_SNAP_H
#define FENCER_SNAP_H

struct fence;
struct msg_boot;
struct msg_snap;

void	fencer_snap_init(const char *);
void	fencer_snap_req(uint32_t, const struct msg_snap *);
int	fencer_branch_is(uid_t, const char *);
int	fencer_branch_upper(uid_t, const char *, char *, size_t);
int	fencer_branch_home(struct fence *, const struct msg_boot *,
	    const char *, uint32_t);

#endif /* FENCER_SNAP_H */
