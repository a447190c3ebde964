/*
 * The parent's machine-wide claim on its range of fence uids (`fence
 * uids'), held for as long as the daemon lives; the fencer gives the
 * uids out within it (fencer/fencer_uids.c).
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "parent.h"

/*
 * Two daemons must never give fences the same uid: a fence of one could
 * then signal the other's processes or own its files, and neither could
 * count what its fences run.  The parent claims its range machine-wide
 * at start, before it forks: a file UIDS_CLAIM_DIR/LOW-HIGH.ID it holds
 * an flock on for as long as it lives (flock holds across pid
 * namespaces).  A claim whose lock is free was a dead daemon's and goes;
 * a live one that overlaps ours stops us, naming it.  The directory's
 * own lock makes two starts take turns.  Returns the held descriptor.
 */
int
uids_claim(uid_t lo, uid_t hi, const char *id, const char *state)
{
	char		 path[PATH_MAX], buf[PATH_MAX + 32], *dot, *dash;
	const char	*errstr;
	struct dirent	*de;
	struct stat	 sb;
	long long	 olo, ohi;
	ssize_t		 n;
	DIR		*d;
	int		 dfd, fd, ofd;

	if (mkdir(UIDS_CLAIM_DIR, 0700) == -1 && errno != EEXIST)
		fatal("mkdir %s", UIDS_CLAIM_DIR);
	if ((dfd = open(UIDS_CLAIM_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(dfd, &sb) == -1)
		fatal("%s", UIDS_CLAIM_DIR);
	if (sb.st_uid != 0 || (sb.st_mode & 022) != 0)
		fatalx("%s: not a directory of root's that only root may "
		    "write", UIDS_CLAIM_DIR);
	if (flock(dfd, LOCK_EX) == -1)
		fatal("flock %s", UIDS_CLAIM_DIR);
	if ((d = fdopendir(dup(dfd))) == NULL)
		fatal("%s", UIDS_CLAIM_DIR);
	while ((de = readdir(d)) != NULL) {
		/* LOW-HIGH.ID; anything else is not ours to judge. */
		if (de->d_name[0] == '.' ||
		    strlen(de->d_name) >= sizeof(buf) ||
		    (dot = strchr(de->d_name, '.')) == NULL ||
		    strlen(dot + 1) != DAEMON_ID_LEN)
			continue;
		(void)strlcpy(buf, de->d_name, sizeof(buf));
		buf[dot - de->d_name] = '\0';
		if ((dash = strchr(buf, '-')) == NULL)
			continue;
		*dash = '\0';
		olo = strtonum(buf, 0, UINT32_MAX, &errstr);
		if (errstr != NULL)
			continue;
		ohi = strtonum(dash + 1, 0, UINT32_MAX, &errstr);
		if (errstr != NULL)
			continue;
		if ((ofd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC)) == -1)
			continue;
		if (flock(ofd, LOCK_EX | LOCK_NB) == 0) {
			/* Its daemon is gone. */
			(void)unlinkat(dfd, de->d_name, 0);
			close(ofd);
			continue;
		}
		if (errno != EWOULDBLOCK)
			fatal("flock %s/%s", UIDS_CLAIM_DIR, de->d_name);
		if (olo <= (long long)hi && ohi >= (long long)lo) {
			n = read(ofd, buf, sizeof(buf) - 1);
			buf[n > 0 ? n : 0] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			fatalx("fence uids %u-%u overlap %lld-%lld of another "
			    "fenced (daemon %s, state %s): give each daemon "
			    "a range of its own", (unsigned)lo, (unsigned)hi,
			    olo, ohi, dot + 1, buf[0] != '\0' ? buf :
			    "unknown");
		}
		close(ofd);
	}
	closedir(d);
	if ((size_t)snprintf(path, sizeof(path), "%u-%u.%s", (unsigned)lo,
	    (unsigned)hi, id) >= sizeof(path))
		fatalx("%s: name too long", __func__);
	if ((fd = openat(dfd, path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		fatal("%s/%s", UIDS_CLAIM_DIR, path);
	if (flock(fd, LOCK_EX | LOCK_NB) == -1)
		fatal("flock %s/%s", UIDS_CLAIM_DIR, path);
	close(dfd);	/* ours is held: the next one may look */
	/* For people, and for the message above: whose it is. */
	n = snprintf(buf, sizeof(buf), "%s\n", state);
	if (n > 0 && (size_t)n < sizeof(buf) && write(fd, buf, n) != n)
		log_warn("%s: %s/%s", __func__, UIDS_CLAIM_DIR, path);
	return (fd);
}

/* At exit, once the fences are gone: the claim goes too. */
void
uids_release(uid_t lo, uid_t hi, const char *id, int fd)
{
	char	 path[PATH_MAX];

	if (fd == -1)
		return;
	if ((size_t)snprintf(path, sizeof(path), "%s/%u-%u.%s",
	    UIDS_CLAIM_DIR, (unsigned)lo, (unsigned)hi, id) < sizeof(path))
		(void)unlink(path);
	close(fd);
}
