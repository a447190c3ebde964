/*
 * The uids of fences owned by root.  A fence never runs as uid 0, so
 * each key of root's gets a uid of its own from `fence uids' and keeps
 * it, so that its home stays its own across stops and restarts.  No
 * account of the host may hold it: asked of NSS each time it is given
 * out (uid_account()).
 *
 * The records live in one file, <state>/fence-uids (0600, root's), one
 * line per key: "UID KEY HOME".  The fencer reads it once, at the first
 * boot of a root-owned fence, and looks keys up in memory from then on.
 * A key that gets a new uid appends its line, synced before its fence
 * runs; only a reclaim or a migration rewrites the file (temp file,
 * fsync, rename).  An append cut short by a crash leaves a last line
 * without its newline: no fence ever ran with it (the boot waits for
 * the sync), so the load drops it and rewrites the file.  No directory
 * is scanned at boot.
 *
 * The file holds at most UIDS_MAX records.  When the range or the table
 * is full, records are reclaimed whose home no longer exists (and whose
 * fence is not running): nothing on the host belongs to that uid any
 * more, since a fence writes nowhere else that outlives it.  When none
 * can be reclaimed, the boot fails and says why.
 *
 * An older daemon kept each record in <state>/envs/<key>/uid; those are
 * moved into the file when it is first read.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "fencer.h"

#define UIDS_FILE	"fence-uids"
#define UIDS_TEMP	".fence-uids"
#define UIDS_MAX	4096
#define UIDS_LINE_MAX	(10 + 1 + FENCE_KEY_SIZE + 1 + PATH_MAX + 2)

struct uid_rec {
	uid_t	 ur_uid;
	char	 ur_key[FENCE_KEY_SIZE];
	char	*ur_home;		/* "" when not known */
};

static struct uid_rec	*uids;
static size_t		 nuids;
static int		 uids_loaded;
static int		 uids_dirty;	/* records deleted since the save */
static int		 uid_held;	/* fencer_uid_hold() */
static uid_t		 uid_held_uid;

static int
uids_path(const char *name, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/%s", fencer_self.ps_conf.c_state,
	    name) >= len) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	return (0);
}

static struct uid_rec *
uids_by_key(const char *key)
{
	size_t	 i;

	for (i = 0; i < nuids; i++)
		if (strcmp(uids[i].ur_key, key) == 0)
			return (&uids[i]);
	return (NULL);
}

static int
uids_used(uid_t uid)
{
	size_t	 i;

	for (i = 0; i < nuids; i++)
		if (uids[i].ur_uid == uid)
			return (1);
	return (0);
}

static int
uids_add(uid_t uid, const char *key, const char *home)
{
	if (nuids >= UIDS_MAX || uids_by_key(key) != NULL || uids_used(uid)) {
		errno = EEXIST;
		return (-1);
	}
	if (uids == NULL && (uids = calloc(UIDS_MAX, sizeof(*uids))) == NULL)
		return (-1);
	if ((uids[nuids].ur_home = strdup(home)) == NULL)
		return (-1);
	uids[nuids].ur_uid = uid;
	strlcpy(uids[nuids].ur_key, key, sizeof(uids[nuids].ur_key));
	nuids++;
	return (0);
}

static void
uids_del(size_t i)
{
	free(uids[i].ur_home);
	uids[i] = uids[--nuids];
	memset(&uids[nuids], 0, sizeof(uids[nuids]));
}

static int
uids_save(void)
{
	char	 tmp[PATH_MAX], path[PATH_MAX];
	FILE	*fp;
	size_t	 i;
	int	 fd;

	if (uids_path(UIDS_TEMP, tmp, sizeof(tmp)) == -1 ||
	    uids_path(UIDS_FILE, path, sizeof(path)) == -1)
		return (-1);
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return (-1);
	if ((fp = fdopen(fd, "w")) == NULL) {
		close(fd);
		goto fail;
	}
	for (i = 0; i < nuids; i++)
		fprintf(fp, "%u %s %s\n", (unsigned)uids[i].ur_uid,
		    uids[i].ur_key, uids[i].ur_home);
	if (fflush(fp) == EOF || fsync(fileno(fp)) == -1) {
		fclose(fp);
		goto fail;
	}
	if (fclose(fp) == EOF || rename(tmp, path) == -1)
		goto fail;
	uids_dirty = 0;
	return (0);
 fail:
	(void)unlink(tmp);
	return (-1);
}

/*
 * The last record, appended and synced: a new key's uid costs one
 * write and one fdatasync, not a new file and a rename (0.3 to 1 ms of
 * a first boot here).  Anything unexpected rewrites the whole file.
 */
static int
uids_append(void)
{
	const struct uid_rec *ur = &uids[nuids - 1];
	char		 path[PATH_MAX], line[UIDS_LINE_MAX];
	struct stat	 sb;
	int		 fd, n;

	if (uids_path(UIDS_FILE, path, sizeof(path)) == -1)
		return (-1);
	n = snprintf(line, sizeof(line), "%u %s %s\n", (unsigned)ur->ur_uid,
	    ur->ur_key, ur->ur_home);
	if (n < 0 || (size_t)n >= sizeof(line))
		return (-1);
	if ((fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return (uids_save());
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) || sb.st_uid != 0 ||
	    (sb.st_mode & 077) != 0 || write(fd, line, n) != n ||
	    fdatasync(fd) == -1) {
		close(fd);
		return (uids_save());
	}
	return (close(fd));
}

/* One line: "UID KEY HOME", HOME absolute or empty. */
static int
uids_parse(char *line, char *err, size_t errlen, int lineno)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	char		*uidstr, *key, *home;
	const char	*errstr;
	uid_t		 uid;

	uidstr = line;
	if ((key = strchr(uidstr, ' ')) == NULL)
		goto bad;
	*key++ = '\0';
	if ((home = strchr(key, ' ')) == NULL)
		goto bad;
	*home++ = '\0';
	uid = strtonum(uidstr, 1, UINT32_MAX - 1, &errstr);
	if (errstr != NULL || !fence_key_valid(key) ||
	    (home[0] != '\0' && home[0] != '/'))
		goto bad;
	if (uids_add(uid, key, home) == -1)
		goto bad;
	return (0);
 bad:
	snprintf(err, errlen, "%s/%s line %d is not \"UID KEY HOME\" with "
	    "a uid and a key of their own", c->c_state, UIDS_FILE, lineno);
	return (-1);
}

/*
 * Records of the older layout, <state>/envs/<key>/uid: read in, or with
 * clean (once the file has them) removed with what else their folder
 * held.  Returns how many there were.
 */
static int
uids_migrate(int clean)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	char		 envs[PATH_MAX], dir[PATH_MAX], path[PATH_MAX], buf[32];
	const char	*errstr;
	struct uid_rec	*ur;
	struct dirent	*de;
	struct stat	 sb;
	ssize_t		 n;
	uid_t		 uid;
	DIR		*d;
	int		 fd, found = 0;

	if (uids_path("envs", envs, sizeof(envs)) == -1 ||
	    (d = opendir(envs)) == NULL)
		return (0);
	while ((de = readdir(d)) != NULL) {
		if (!fence_key_valid(de->d_name) ||
		    (size_t)snprintf(dir, sizeof(dir), "%s/%s", envs,
		    de->d_name) >= sizeof(dir) ||
		    (size_t)snprintf(path, sizeof(path), "%s/uid", dir) >=
		    sizeof(path))
			continue;
		/* The new layout has only folders in envs/<owner>. */
		if (lstat(path, &sb) == -1 || !S_ISREG(sb.st_mode))
			continue;
		if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		uid = strtonum(buf, c->c_fence_uid_lo, c->c_fence_uid_hi,
		    &errstr);
		if (errstr != NULL) {
			log_warnx("%s: %s: uid %s not kept", __func__, path,
			    buf);
			continue;
		}
		if (!clean) {
			if (uids_add(uid, de->d_name, "") == 0)
				found++;
			else
				log_warnx("%s: %s: uid %s not kept", __func__,
				    path, buf);
			continue;
		}
		/* Removed only once the file says the same. */
		if ((ur = uids_by_key(de->d_name)) == NULL || ur->ur_uid != uid)
			continue;
		found++;
		(void)unlink(path);
		if ((size_t)snprintf(path, sizeof(path), "%s/probe.json",
		    dir) < sizeof(path))
			(void)unlink(path);
		(void)rmdir(dir);
	}
	closedir(d);
	return (found);
}

static int
uids_load(char *err, size_t errlen)
{
	char		 path[PATH_MAX], line[UIDS_LINE_MAX];
	struct stat	 sb;
	FILE		*fp;
	int		 fd, lineno = 0, torn = 0;

	if (uids_loaded)
		return (0);
	if (uids_path(UIDS_FILE, path, sizeof(path)) == -1) {
		snprintf(err, errlen, "state path too long");
		return (-1);
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1 &&
	    errno != ENOENT) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (fd != -1) {
		if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
		    sb.st_uid != 0 || (sb.st_mode & 077) != 0 ||
		    sb.st_size > (off_t)UIDS_MAX * UIDS_LINE_MAX) {
			close(fd);
			snprintf(err, errlen, "%s is not a file of root's, "
			    "mode 0600, of at most %d records", path, UIDS_MAX);
			return (-1);
		}
		if ((fp = fdopen(fd, "r")) == NULL) {
			close(fd);
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return (-1);
		}
		while (fgets(line, sizeof(line), fp) != NULL) {
			lineno++;
			if (strchr(line, '\n') == NULL && !feof(fp)) {
				snprintf(err, errlen, "%s line %d is too long",
				    path, lineno);
				goto fail;
			}
			if (strchr(line, '\n') == NULL) {
				log_warnx("%s: line %d was cut short (a crash "
				    "while a uid was recorded): dropped", path,
				    lineno);
				torn = 1;
				break;
			}
			line[strcspn(line, "\n")] = '\0';
			if (uids_parse(line, err, errlen, lineno) == -1)
				goto fail;
		}
		if (ferror(fp)) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		fclose(fp);
	}
	uids_loaded = 1;
	if (torn && uids_save() == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (uids_migrate(0) > 0) {
		if (uids_save() == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return (-1);
		}
		log_info("moved %d fence uid records to %s", uids_migrate(1),
		    path);
	}
	return (0);
 fail:
	fclose(fp);
	while (nuids > 0)
		uids_del(nuids - 1);
	return (-1);
}

/* Records whose home is gone and whose fence does not run. */
static int
uids_reclaim(void)
{
	struct stat	 sb;
	size_t		 i;
	int		 n = 0;

	for (i = 0; i < nuids; ) {
		if (uids[i].ur_home[0] == '\0' ||
		    fencer_find(0, uids[i].ur_key) != NULL ||
		    lstat(uids[i].ur_home, &sb) == 0 || errno != ENOENT) {
			i++;
			continue;
		}
		log_info("fence uid %u of %s freed: its home %s is gone",
		    (unsigned)uids[i].ur_uid, uids[i].ur_key,
		    uids[i].ur_home);
		uids_del(i);
		uids_dirty = 1;
		n++;
	}
	return (n);
}

static int
uids_cmp(const void *a, const void *b)
{
	uid_t	 x = *(const uid_t *)a, y = *(const uid_t *)b;

	return (x < y ? -1 : x > y);
}

/*
 * Whether uid u is an account's on this host now: 1 with who naming it
 * (a user with that uid, or a group with that gid, which a root-owned
 * fence's gid would be), 0 when none, -1 when NSS could not tell (then
 * the uid is not given out).  The parent refuses a range that holds an
 * account it can list, at start and reload; this is what sees one made
 * since, or one a source that does not enumerate knows.  The fencer is
 * root, unchrooted, with a filter that refuses no call NSS makes.
 */
static int
uid_account(uid_t u, char *who, size_t len)
{
	struct passwd	*pw;
	struct group	*gr;

	errno = 0;
	if ((pw = getpwuid(u)) != NULL) {
		(void)snprintf(who, len, "user %s", pw->pw_name);
		return (1);
	}
	/* getpwuid(3): these all mean "no such user". */
	if (errno != 0 && errno != ENOENT && errno != ESRCH &&
	    errno != EBADF && errno != EPERM) {
		(void)snprintf(who, len, "getpwuid: %s", strerror(errno));
		return (-1);
	}
	errno = 0;
	if ((gr = getgrgid(u)) != NULL) {
		(void)snprintf(who, len, "group %s", gr->gr_name);
		return (1);
	}
	if (errno != 0 && errno != ENOENT && errno != ESRCH &&
	    errno != EBADF && errno != EPERM) {
		(void)snprintf(who, len, "getgrgid: %s", strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * The lowest uid of the range that no record has and no account holds;
 * an account's is skipped with a log line.  -1 with err empty when
 * there is none, with err set when NSS could not answer.
 */
static int
uids_free(uid_t *out, char *err, size_t errlen)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	uid_t	 used[UIDS_MAX], u;
	size_t	 i, n = 0;
	char	 who[LOGIN_NAME_MAX + 64];

	err[0] = '\0';
	if (nuids >= UIDS_MAX)
		return (-1);
	for (i = 0; i < nuids; i++)
		if (uids[i].ur_uid >= c->c_fence_uid_lo &&
		    uids[i].ur_uid <= c->c_fence_uid_hi)
			used[n++] = uids[i].ur_uid;
	if (uid_held && n < UIDS_MAX)
		used[n++] = uid_held_uid;
	qsort(used, n, sizeof(used[0]), uids_cmp);
	for (i = 0, u = c->c_fence_uid_lo; ; u++) {
		while (i < n && used[i] < u)
			i++;
		if (i == n || used[i] != u) {
			switch (uid_account(u, who, sizeof(who))) {
			case 0:
				*out = u;
				return (0);
			case 1:
				log_warnx("fence uid %u skipped: %s has it",
				    (unsigned)u, who);
				break;
			default:
				(void)snprintf(err, errlen, "cannot tell "
				    "whether uid %u is an account's: %s",
				    (unsigned)u, who);
				return (-1);
			}
		}
		/* hi is at most FENCE_UID_MAX: u + 1 cannot wrap. */
		if (u == c->c_fence_uid_hi)
			return (-1);
	}
}

/*
 * The uid of root's fence KEY whose home is HOME: the recorded one, or a
 * new one, recorded before it is used.
 */
int
fencer_uid_for(const char *key, const char *home, uid_t *uid, char *err,
    size_t errlen)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	struct uid_rec	*ur;
	uid_t		 u;
	char		 who[LOGIN_NAME_MAX + 64];

	if (uids_load(err, errlen) == -1)
		return (-1);
	if (strchr(home, '\n') != NULL || home[0] != '/') {
		snprintf(err, errlen, "home %s cannot be recorded", home);
		return (-1);
	}
	if ((ur = uids_by_key(key)) != NULL) {
		if (ur->ur_uid < c->c_fence_uid_lo ||
		    ur->ur_uid > c->c_fence_uid_hi) {
			snprintf(err, errlen, "fence %s has uid %u, outside "
			    "fence uids %u-%u (%s/%s)", key,
			    (unsigned)ur->ur_uid, (unsigned)c->c_fence_uid_lo,
			    (unsigned)c->c_fence_uid_hi, c->c_state, UIDS_FILE);
			return (-1);
		}
		/* Given out again at each boot: asked again each time. */
		switch (uid_account(ur->ur_uid, who, sizeof(who))) {
		case 0:
			break;
		case 1:
			log_warnx("fence %s of root not booted: its uid %u "
			    "is %s's now", key, (unsigned)ur->ur_uid, who);
			snprintf(err, errlen, "uid %u of fence %s is %s's on "
			    "this host: remove that account, or the key's "
			    "line in %s/%s and its home", (unsigned)ur->ur_uid,
			    key, who, c->c_state, UIDS_FILE);
			return (-1);
		default:
			snprintf(err, errlen, "cannot tell whether uid %u of "
			    "fence %s is an account's: %s",
			    (unsigned)ur->ur_uid, key, who);
			return (-1);
		}
		/*
		 * Its home moved (the key is a branch now, its home an
		 * upper layer in the state): the record follows, or a
		 * reclaim would take the uid from a home that exists.
		 */
		if (strcmp(ur->ur_home, home) != 0) {
			char	*was = ur->ur_home;

			if ((ur->ur_home = strdup(home)) == NULL) {
				ur->ur_home = was;
				snprintf(err, errlen, "out of memory");
				return (-1);
			}
			free(was);
			if (uids_save() == -1) {
				snprintf(err, errlen, "cannot record the home "
				    "of %s: %s", key, strerror(errno));
				return (-1);
			}
		}
		*uid = ur->ur_uid;
		return (0);
	}
	if (uids_free(&u, err, errlen) == -1 && (err[0] != '\0' ||
	    uids_reclaim() == 0 || uids_free(&u, err, errlen) == -1)) {
		if (err[0] != '\0')
			return (-1);
		snprintf(err, errlen, "no free uid: every uid of fence uids "
		    "%u-%u (at most %d) belongs to a key of root's whose home "
		    "still exists, or to an account of the host; remove the "
		    "home of a key no longer needed, or widen fence uids",
		    (unsigned)c->c_fence_uid_lo, (unsigned)c->c_fence_uid_hi,
		    UIDS_MAX);
		return (-1);
	}
	/* Records reclaimed since the last save: only a new file says so. */
	if (uids_add(u, key, home) == -1 ||
	    (uids_dirty ? uids_save() : uids_append()) == -1) {
		snprintf(err, errlen, "cannot record uid %u for %s: %s",
		    (unsigned)u, key, strerror(errno));
		if ((ur = uids_by_key(key)) != NULL)
			uids_del(ur - uids);
		return (-1);
	}
	log_info("fence %s of root gets uid %u", key, (unsigned)u);
	*uid = u;
	return (0);
}

/*
 * A boot's step (fencer_fence.c): the uid and gid fence f runs as.  Its
 * owner's (gid the owner's group), or for a fence of root's the uid of
 * `fence uids' recorded for its key and home (home "": the path was too
 * long to record), named fence-<uid>.  -1 once the broker has the error.
 */
int
fencer_uid_assign(struct fence *f, gid_t gid, const char *home,
    uint32_t reqid)
{
	char	 err[BACKEND_ERR_MAX];

	if (f->f_info.f_owner != 0) {
		f->f_info.f_uid = f->f_info.f_owner;
		f->f_gid = gid;
		return (0);
	}
	strlcpy(err, "home path too long", sizeof(err));
	if (home[0] == '\0' || fencer_uid_for(f->f_info.f_key, home,
	    &f->f_info.f_uid, err, sizeof(err)) == -1) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "no-uid", "%s",
		    err);
		return (-1);
	}
	f->f_gid = f->f_info.f_uid;
	/* No passwd entry for a fence uid: its name says what it is. */
	snprintf(f->f_user, sizeof(f->f_user), "fence-%u",
	    (unsigned)f->f_info.f_uid);
	return (0);
}

/*
 * A uid of the range for a fence of the fencer's own that has no key and
 * no home (the vm backend's KVM try): one no record has, held in memory
 * only, so that no key is given it until fencer_uid_release().  Nothing
 * on the host belongs to a uid no record has.
 */
int
fencer_uid_hold(uid_t *uid, char *err, size_t errlen)
{
	uid_t	 u;

	if (uid_held) {
		snprintf(err, errlen, "a uid is held already");
		return (-1);
	}
	if (uids_load(err, errlen) == -1)
		return (-1);
	if (uids_free(&u, err, errlen) == -1 && (err[0] != '\0' ||
	    uids_reclaim() == 0 || uids_free(&u, err, errlen) == -1)) {
		if (err[0] != '\0')
			return (-1);
		snprintf(err, errlen, "no free uid in fence uids %u-%u",
		    (unsigned)fencer_self.ps_conf.c_fence_uid_lo,
		    (unsigned)fencer_self.ps_conf.c_fence_uid_hi);
		return (-1);
	}
	uid_held = 1;
	uid_held_uid = u;
	*uid = u;
	return (0);
}

void
fencer_uid_release(void)
{
	uid_held = 0;
}
