/*
 * A fence's sandbox home (fencer_home.c), whatever backend builds the
 * fence: a directory <homes>/<key> of the fence's uid, or an ext4 image
 * attached to a loop device.  The fencer prepares it before the backend
 * boots the fence and hands the backend the result.
 */
#ifndef FENCER_HOME_H
#define FENCER_HOME_H

#include <sys/types.h>
#include <limits.h>
#include <stdint.h>

#include "fenced.h"

/*
 * <homes>/<key>, created 0700 for uid:gid if missing; the error names
 * paths and owners, for the log only.  fencer_home_own(dir, uid, gid): 0
 * if dir is reached through directories of root's or the uid's only and
 * is the uid's own (a home of their own, not / or /nonexistent); it
 * creates nothing.
 */
int	fencer_home_prepare(const char *, const char *, uid_t, gid_t, char *,
	    size_t, char *, size_t);
int	fencer_home_own(const char *, uid_t, gid_t);

/*
 * fencer_home_path(conf, pw, owner, key, homes, len, home, len, err, len):
 * where the home of owner's fence key is (its image with `limit home',
 * else <homes>/<key>), before anything is made; -1 if the owner can
 * have none, err saying why for the user.
 */
struct passwd;
int	fencer_home_path(const struct fenced_config *, const struct passwd *,
	    uid_t, const char *, char *, size_t, char *, size_t, char *,
	    size_t);

/*
 * fencer_home_image(root, owner, key, size, uid, gid, img, err, len):
 * the home as an ext4 image of size bytes, <root>/homes/<owner>/<key>.img,
 * made on first use with its root directory uid:gid's, attached to a
 * loop device that goes away by itself once nothing holds it.  The
 * caller closes hi_loopfd once the backend's boot has returned (the
 * fence has mounted hi_dev by then, or failed).
 */
struct fencer_home_img {
	char		 hi_path[PATH_MAX];	/* the image */
	char		 hi_dev[32];		/* /dev/loopN */
	int		 hi_loopfd;
	uint64_t	 hi_size;		/* bytes, the limit */
	uint64_t	 hi_used;		/* bytes it takes on the host */
};
int	fencer_home_image(const char *, uid_t, const char *, uint64_t, uid_t,
	    gid_t, struct fencer_home_img *, char *, size_t);

#endif /* FENCER_HOME_H */
