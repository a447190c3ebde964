/*
 * The host's reading of a fence (docs/probe.md, "What grants each
 * axis"): after a probe ran, the fencer reads the kernel's own account
 * of the fence's pid 1 from the host side and sets it against its own.
 * Nothing a process inside the fence does can change what these files
 * say about pid 1: its namespaces, filters, capabilities and mount table
 * were set by the fencer before the agent ran, and cannot be undone.
 *
 * The agent is not dumpable and the fencer has no CAP_SYS_PTRACE, so
 * /proc/PID/ns and /proc/PID/root are closed to us; status, mountinfo
 * and net/ are not (they need no ptrace access).  Every file is read
 * with a bound and parsed strictly: whatever cannot be read or parsed
 * leaves the axes it would grant ungranted, with the reason.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names.h"
#include "probe_expect.h"
#include "fencer_host.h"

static void
host_err(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
host_err(char *err, size_t len, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/*
 * Read fd into buf from *got on, until its end (1) or until *got is
 * room (0, full); -1 with errno.  The one read loop of both readers
 * below.
 */
static int
host_read_fill(int fd, char *buf, size_t room, size_t *got)
{
	ssize_t	 n;

	while (*got < room) {
		n = read(fd, buf + *got, room - *got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return (-1);
		if (n == 0)
			return (1);
		*got += (size_t)n;
	}
	return (0);
}

/* buf, got bytes long, terminated: 0, or -1 with EBADMSG for a NUL in it. */
static int
host_read_end(char *buf, size_t got)
{
	buf[got] = '\0';
	if (strlen(buf) != got) {
		errno = EBADMSG;
		return (-1);
	}
	return (0);
}

/*
 * The whole of a /proc file into buf, NUL-terminated; -1 with errno
 * EFBIG when it does not fit (a bound, never a cut: half a table would
 * be a lie).
 */
ssize_t
host_read_file(const char *path, char *buf, size_t len)
{
	size_t	 got = 0;
	int	 fd, rv, saved;

	if (len < 2) {
		errno = EINVAL;
		return (-1);
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return (-1);
	rv = host_read_fill(fd, buf, len - 1, &got);
	saved = errno;
	close(fd);
	if (rv != 1) {
		errno = rv == 0 ? EFBIG : saved;
		return (-1);
	}
	if (host_read_end(buf, got) == -1)
		return (-1);
	return ((ssize_t)got);
}

/*
 * The whole of a /proc file of unknown size (the fencer's mountinfo)
 * into a buffer of its own, NUL-terminated, grown as it fills up to
 * max bytes with the NUL: NULL with errno EFBIG past that, EBADMSG for
 * a NUL inside.  *lenp is the length; the caller frees the buffer.
 * Large reads: the kernel makes each read's worth of the table afresh.
 */
char *
host_read_grow(const char *path, size_t max, size_t *lenp)
{
	char	*buf = NULL, *nbuf, one;
	size_t	 got = 0, cap = 0, ncap;
	ssize_t	 n;
	int	 fd, rv, saved;

	if (max < 2) {
		errno = EINVAL;
		return (NULL);
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return (NULL);
	for (;;) {
		if (got + 1 >= cap) {
			if (cap == max) {
				/* Full: only an end of file now fits. */
				while ((n = read(fd, &one, 1)) == -1 &&
				    errno == EINTR)
					;
				if (n == 0)
					break;
				errno = n == -1 ? errno : EFBIG;
				goto fail;
			}
			ncap = cap == 0 ? 64 * 1024 : cap * 2;
			if (ncap > max || ncap < cap)
				ncap = max;
			if ((nbuf = realloc(buf, ncap)) == NULL)
				goto fail;
			buf = nbuf;
			cap = ncap;
		}
		if ((rv = host_read_fill(fd, buf, cap - 1, &got)) == -1)
			goto fail;
		if (rv == 1)
			break;
	}
	close(fd);
	if (host_read_end(buf, got) == -1) {
		free(buf);
		return (NULL);
	}
	*lenp = got;
	return (buf);
 fail:
	saved = errno;
	close(fd);
	free(buf);
	errno = saved;
	return (NULL);
}

/* One decimal number, the whole token, within [0, max]. */
static int
host_num(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t	 v = 0;

	if (*s == '\0')
		return (-1);
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return (-1);
		/* A digit over max alone would wrap max - digit around. */
		if ((uint64_t)(*s - '0') > max ||
		    v > (max - (uint64_t)(*s - '0')) / 10)
			return (-1);
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return (0);
}

/* Exactly 16 hex digits, as status prints a capability set. */
static int
host_hex64(const char *s, uint64_t *out)
{
	uint64_t	 v = 0;
	int		 i;

	for (i = 0; i < 16; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return (-1);
		v = (v << 4) | (uint64_t)(isdigit((unsigned char)s[i]) ?
		    s[i] - '0' : (tolower((unsigned char)s[i]) - 'a' + 10));
	}
	if (s[16] != '\0')
		return (-1);
	*out = v;
	return (0);
}

/* Split the value of a status line into at most max tab-separated words. */
static int
host_words(char *s, char **w, int max)
{
	int	 n = 0;
	char	*t;

	while ((t = strsep(&s, "\t ")) != NULL) {
		if (*t == '\0')
			continue;
		if (n == max)
			return (-1);
		w[n++] = t;
	}
	return (n);
}

enum {
	ST_UID, ST_NSPID, ST_NNP, ST_SECCOMP, ST_FILTERS,
	ST_CAPEFF, ST_CAPPRM, ST_CAPBND, ST_CAPAMB, ST_MAX
};

static const char *const host_status_keys[ST_MAX] = {
	[ST_UID] = "Uid", [ST_NSPID] = "NSpid", [ST_NNP] = "NoNewPrivs",
	[ST_SECCOMP] = "Seccomp", [ST_FILTERS] = "Seccomp_filters",
	[ST_CAPEFF] = "CapEff", [ST_CAPPRM] = "CapPrm",
	[ST_CAPBND] = "CapBnd", [ST_CAPAMB] = "CapAmb",
};

/*
 * The fields of /proc/PID/status the levels rest on, each present
 * exactly once and well-formed; buf is cut up.  A kernel without
 * Seccomp_filters (before 5.9) fails here: then the privileges axis
 * cannot be granted, which docs/probe.md states.
 */
int
host_status_parse(char *buf, struct host_status *st, char *err,
    size_t errlen)
{
	char		*line, *next, *colon, *w[32];
	uint64_t	 v;
	unsigned int	 seen = 0;
	int		 k, n, i;

	memset(st, 0, sizeof(*st));
	for (line = buf; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if ((colon = strchr(line, ':')) == NULL) {
			host_err(err, errlen, "status: line without a colon");
			return (-1);
		}
		*colon = '\0';
		for (k = 0; k < ST_MAX; k++)
			if (strcmp(line, host_status_keys[k]) == 0)
				break;
		if (k == ST_MAX)
			continue;
		if (seen & (1U << k)) {
			host_err(err, errlen, "status: %s twice",
			    host_status_keys[k]);
			return (-1);
		}
		seen |= 1U << k;
		if ((n = host_words(colon + 1, w, (int)nitems(w))) < 1)
			goto bad;
		switch (k) {
		case ST_UID:
			if (n != 4)
				goto bad;
			for (i = 0; i < 4; i++) {
				if (host_num(w[i], UINT32_MAX, &v) == -1)
					goto bad;
				st->hs_uid[i] = (uint32_t)v;
			}
			break;
		case ST_NSPID:
			for (i = 0; i < n; i++)
				if (host_num(w[i], INT32_MAX, &v) == -1 ||
				    v == 0)
					goto bad;
			st->hs_nspid_depth = (uint32_t)n;
			st->hs_nspid_last = (uint32_t)v;
			break;
		case ST_NNP:
		case ST_SECCOMP:
		case ST_FILTERS:
			if (n != 1 || host_num(w[0], k == ST_FILTERS ?
			    UINT32_MAX : 2, &v) == -1)
				goto bad;
			if (k == ST_NNP)
				st->hs_nnp = (int)v;
			else if (k == ST_SECCOMP)
				st->hs_seccomp = (int)v;
			else
				st->hs_filters = (uint32_t)v;
			break;
		default:
			if (n != 1 || host_hex64(w[0],
			    &st->hs_cap[k - ST_CAPEFF]) == -1)
				goto bad;
			break;
		}
		continue;
 bad:
		host_err(err, errlen, "status: bad %s", host_status_keys[k]);
		return (-1);
	}
	for (k = 0; k < ST_MAX; k++)
		if (!(seen & (1U << k))) {
			host_err(err, errlen, "status: no %s",
			    host_status_keys[k]);
			return (-1);
		}
	return (0);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static int
host_unescape(char *s)
{
	char	*d = s;

	while (*s != '\0') {
		if (*s == '\\') {
			if (s[1] < '0' || s[1] > '3' || s[2] < '0' ||
			    s[2] > '7' || s[3] < '0' || s[3] > '7')
				return (-1);
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
			    (s[3] - '0'));
			if (d[-1] == '\0')
				return (-1);
			s += 4;
		} else
			*d++ = *s++;
	}
	*d = '\0';
	return (0);
}

static int
host_has_opt(const char *opts, const char *opt)
{
	size_t	 n = strlen(opt);

	while (*opts != '\0') {
		if (strncmp(opts, opt, n) == 0 &&
		    (opts[n] == ',' || opts[n] == '\0'))
			return (1);
		if ((opts = strchr(opts, ',')) == NULL)
			break;
		opts++;
	}
	return (0);
}

/*
 * mountinfo: "id parent major:minor root mountpoint options [optional
 * fields] - fstype source superoptions", one line per mount, at most
 * max lines.  The strings point into buf.  Returns the number of mounts.
 *
 * A fence's table (HOST_MOUNTS_FENCE) was built by the fencer, and
 * every root in it is a path.  The host's own (HOST_MOUNTS_HOST) holds
 * whatever the host mounted, and a root may be something else there:
 * the kernel names the root of a namespace file bound in by ip netns,
 * Docker, podman or CNI "net:[4026532001]".  Such a root is taken as
 * it is (unescaped, not empty); it holds no path, so no fence mount is
 * ever translated through it.  Mount points are paths in both: the
 * kernel leaves out a mount its reader cannot reach.
 */
int
host_mounts_parse(char *buf, struct host_mount *m, int max, int whose,
    char *err, size_t errlen)
{
	char		*line, *next, *f[7], *p, *colon, *tail;
	uint64_t	 v;
	int		 n = 0, i;

	for (line = buf; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (n == max) {
			host_err(err, errlen, "mountinfo: more than %d "
			    "mounts", max);
			return (-1);
		}
		p = line;
		for (i = 0; i < 6; i++) {
			if ((f[i] = strsep(&p, " ")) == NULL || *f[i] == '\0')
				goto bad;
		}
		/* The optional fields end with a lone "-". */
		if (p == NULL || (tail = strstr(p, "- ")) == NULL ||
		    (tail != p && tail[-1] != ' '))
			goto bad;
		memset(&m[n], 0, sizeof(m[n]));
		if (host_num(f[0], UINT32_MAX, &v) == -1)
			goto bad;
		m[n].hm_id = (uint32_t)v;
		if (host_num(f[1], UINT32_MAX, &v) == -1)
			goto bad;
		m[n].hm_parent = (uint32_t)v;
		if ((colon = strchr(f[2], ':')) == NULL)
			goto bad;
		*colon = '\0';
		if (host_num(f[2], UINT32_MAX, &v) == -1)
			goto bad;
		m[n].hm_major = (uint32_t)v;
		if (host_num(colon + 1, UINT32_MAX, &v) == -1)
			goto bad;
		m[n].hm_minor = (uint32_t)v;
		if ((f[3][0] != '/' && whose != HOST_MOUNTS_HOST) ||
		    f[4][0] != '/' ||
		    host_unescape(f[3]) == -1 || host_unescape(f[4]) == -1)
			goto bad;
		m[n].hm_root = f[3];
		m[n].hm_point = f[4];
		m[n].hm_ro = host_has_opt(f[5], "ro");
		n++;
		/* An empty line is no end: the kernel writes none. */
		if (next != NULL && *next == '\n')
			goto bad;
		continue;
 bad:
		host_err(err, errlen, "mountinfo: malformed line %d", n + 1);
		return (-1);
	}
	return (n);
}

/*
 * The fencer's own mount table, the host's: read whole, however many
 * mounts, within HOST_SELF_MOUNTS_MAX bytes and HOST_SELF_LINES_MAX
 * mounts, each a clear error.  The memory is what the table needs and
 * is the caller's to free (host_table_free), also after a failure.
 * The host may mount and unmount while the kernel writes the table: a
 * mount present all along is in it once, one that came or went may be
 * or not; each line is whole, and nothing else of it is compared.
 */
int
host_self_read(const char *path, struct host_table *ht, char *err,
    size_t errlen)
{
	char	 why[PROBE_HOST_ERR_LEN];
	char	*p;
	size_t	 len, lines = 0;
	int	 n;

	memset(ht, 0, sizeof(*ht));
	if ((ht->ht_buf = host_read_grow(path, HOST_SELF_MOUNTS_MAX,
	    &len)) == NULL) {
		if (errno == EFBIG)
			host_err(err, errlen, "the fencer's mountinfo: larger "
			    "than %d MiB", HOST_SELF_MOUNTS_MAX / 1024 / 1024);
		else
			host_err(err, errlen, "the fencer's mountinfo: %s",
			    strerror(errno));
		return (-1);
	}
	for (p = ht->ht_buf; (p = strchr(p, '\n')) != NULL; p++)
		lines++;
	if (len > 0 && ht->ht_buf[len - 1] != '\n')
		lines++;
	if (lines > HOST_SELF_LINES_MAX) {
		host_err(err, errlen, "the fencer's mountinfo: more than %d "
		    "mounts", HOST_SELF_LINES_MAX);
		return (-1);
	}
	if ((ht->ht_m = calloc(lines == 0 ? 1 : lines,
	    sizeof(*ht->ht_m))) == NULL) {
		host_err(err, errlen, "the fencer's mountinfo: %s",
		    strerror(errno));
		return (-1);
	}
	if ((n = host_mounts_parse(ht->ht_buf, ht->ht_m, (int)lines,
	    HOST_MOUNTS_HOST, why, sizeof(why))) == -1) {
		host_err(err, errlen, "the fencer's %s", why);
		return (-1);
	}
	/* Never judge against nothing: every fence would look its own. */
	if (n == 0) {
		host_err(err, errlen, "the fencer's mountinfo: no mounts");
		return (-1);
	}
	ht->ht_n = n;
	return (0);
}

void
host_table_free(struct host_table *ht)
{
	free(ht->ht_buf);
	free(ht->ht_m);
	memset(ht, 0, sizeof(*ht));
}

/* Is path equal to prefix or below it? */
static const char *
host_under(const char *path, const char *prefix)
{
	size_t	 n;

	if (strcmp(prefix, "/") == 0)
		return (path);
	n = strlen(prefix);
	if (strncmp(path, prefix, n) != 0 ||
	    (path[n] != '\0' && path[n] != '/'))
		return (NULL);
	return (path + n);
}

static int
host_allowed(const char *path, const char *const *allow, int nallow)
{
	int	 i;

	for (i = 0; i < nallow; i++)
		if (strcmp(path, allow[i]) == 0)
			return (1);
	return (0);
}

/*
 * Where a fence mount of a host filesystem comes from, as a path of the
 * host's tree: through each host mount of the same device whose root
 * holds the fence mount's root.  The first translation that is allowed
 * wins; else the first one found names it (or, with none, the device
 * and root).  Returns 1 if allowed.
 */
static int
host_bind_path(const struct host_mount *fm, const struct host_mount *hm,
    int nh, const char *const *allow, int nallow, char *name, size_t len)
{
	char		 path[PATH_MAX];
	const char	*rest;
	int		 i, found = 0;

	for (i = 0; i < nh; i++) {
		/* A root that is no path ("net:[...]") holds none. */
		if (hm[i].hm_root[0] != '/' ||
		    hm[i].hm_major != fm->hm_major ||
		    hm[i].hm_minor != fm->hm_minor ||
		    (rest = host_under(fm->hm_root, hm[i].hm_root)) == NULL)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s%s",
		    strcmp(hm[i].hm_point, "/") == 0 && *rest == '/' ? "" :
		    hm[i].hm_point, rest) >= sizeof(path))
			continue;
		if (path[0] == '\0')
			strlcpy(path, "/", sizeof(path));
		if (host_allowed(path, allow, nallow))
			return (1);
		if (!found)
			strlcpy(name, path, len);
		found = 1;
	}
	if (!found)
		snprintf(name, len, "%s of device %u:%u", fm->hm_root,
		    fm->hm_major, fm->hm_minor);
	return (0);
}

static int
host_dev_is_host(const struct host_mount *fm, const struct host_mount *hm,
    int nh)
{
	int	 i;

	for (i = 0; i < nh; i++)
		if (hm[i].hm_major == fm->hm_major &&
		    hm[i].hm_minor == fm->hm_minor)
			return (1);
	return (0);
}

/* The last mount on point: the one on top, the one a path reaches. */
static const struct host_mount *
host_mount_at(const struct host_mount *m, int n, const char *point)
{
	const struct host_mount	*top = NULL;
	int			 i;

	for (i = 0; i < n; i++)
		if (strcmp(m[i].hm_point, point) == 0)
			top = &m[i];
	return (top);
}

/*
 * Judge the fence's mount table (fm, as pid 1 sees it) against the
 * host's (hm, the fencer's): "/" must not be the host's, /usr and /etc
 * must be read-only, and every mount of a host device must be one of
 * the allowed host paths.
 */
void
host_mounts_judge(const struct host_mount *fm, int nf,
    const struct host_mount *hm, int nh, const char *const *allow,
    int nallow, const char *rootdir, struct probe_host *ph)
{
	const struct host_mount	*root, *hroot, *m;
	char			 name[PROBE_HOST_PATH_LEN];
	int			 i, rootok = 0;

	root = host_mount_at(fm, nf, "/");
	hroot = host_mount_at(hm, nh, "/");
	/*
	 * A root of the host's filesystem passes only as the one directory
	 * the fencer made for it (runsc's rootfs), mounted read-only.
	 */
	if (root != NULL && rootdir != NULL && rootdir[0] == '/' &&
	    root->hm_ro && (hroot == NULL || root->hm_id != hroot->hm_id) &&
	    host_dev_is_host(root, hm, nh) &&
	    host_bind_path(root, hm, nh, &rootdir, 1, name, sizeof(name)))
		rootok = 1;
	ph->ph_root_host = !rootok && (root == NULL || (hroot != NULL &&
	    root->hm_id == hroot->hm_id) || host_dev_is_host(root, hm, nh));
	ph->ph_usr_ro = (m = host_mount_at(fm, nf, "/usr")) == NULL ? -1 :
	    m->hm_ro;
	ph->ph_etc_ro = (m = host_mount_at(fm, nf, "/etc")) == NULL ? -1 :
	    m->hm_ro;
	ph->ph_nbad = 0;
	for (i = 0; i < nf; i++) {
		if (!host_dev_is_host(&fm[i], hm, nh))
			continue;	/* a filesystem of the fence's own */
		if (rootok && &fm[i] == root)
			continue;
		if (host_bind_path(&fm[i], hm, nh, allow, nallow, name,
		    sizeof(name)))
			continue;
		if (ph->ph_nbad < PROBE_HOST_BINDS_MAX)
			snprintf(ph->ph_bad[ph->ph_nbad], PROBE_HOST_PATH_LEN,
			    "%.100s on %.50s", name, fm[i].hm_point);
		ph->ph_nbad++;
	}
}

/*
 * /proc/PID/net/dev: the interfaces of pid 1's network namespace.  Two
 * header lines, then "name: counters" per interface.
 */
/* How many mounts of fm are of a filesystem the host has mounted. */
uint32_t
host_mounts_nhost(const struct host_mount *fm, int nf,
    const struct host_mount *hm, int nh)
{
	uint32_t n = 0;
	int	 i;

	for (i = 0; i < nf; i++)
		if (host_dev_is_host(&fm[i], hm, nh))
			n++;
	return (n);
}

/*
 * A uid_map, as the fencer reads it, against the fencer's own (self):
 * *own when it is another text (another user namespace: within the
 * same one both read alike), *root when a line maps the host's uid 0.
 * Each line is three numbers; a count of 0 or a range past 2^32 is
 * malformed.  buf is cut up.
 */
int
host_uidmap_parse(char *buf, const char *self, int *own, int *root,
    char *err, size_t errlen)
{
	char		*line, *next, *w[4];
	uint64_t	 in, out, count;
	int		 n = 0;

	*own = strcmp(buf, self) != 0;
	*root = 0;
	for (line = buf; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (++n > 340 || host_words(line, w, 3) != 3 ||
		    host_num(w[0], UINT32_MAX, &in) == -1 ||
		    host_num(w[1], UINT32_MAX, &out) == -1 ||
		    host_num(w[2], (uint64_t)UINT32_MAX + 1, &count) == -1 ||
		    count == 0 || in + count > (uint64_t)UINT32_MAX + 1 ||
		    out + count > (uint64_t)UINT32_MAX + 1) {
			host_err(err, errlen, "uid_map: malformed line %d", n);
			return (-1);
		}
		if (out == 0)
			*root = 1;
	}
	if (n == 0) {
		host_err(err, errlen, "uid_map: empty");
		return (-1);
	}
	return (0);
}

int
host_netdev_parse(char *buf, struct probe_host *ph, char *err, size_t errlen)
{
	char	*line, *next, *colon, *name;
	int	 n = 0;

	ph->ph_nifaces = 0;
	ph->ph_iface_other[0] = '\0';
	for (line = buf; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (n++ < 2)
			continue;
		if ((colon = strchr(line, ':')) == NULL) {
			host_err(err, errlen, "net/dev: malformed line %d", n);
			return (-1);
		}
		*colon = '\0';
		for (name = line; *name == ' '; name++)
			;
		if (*name == '\0' || strlen(name) >= PROBE_HOST_IFNAME_LEN) {
			host_err(err, errlen, "net/dev: bad interface name");
			return (-1);
		}
		ph->ph_nifaces++;
		if (strcmp(name, "lo") != 0 && ph->ph_iface_other[0] == '\0')
			strlcpy(ph->ph_iface_other, name,
			    sizeof(ph->ph_iface_other));
	}
	if (n < 2) {
		host_err(err, errlen, "net/dev: no header");
		return (-1);
	}
	return (0);
}

static void
host_read_status(pid_t pid, char *buf, struct probe_host *ph)
{
	struct host_status	 self, st;
	char			 path[64], self_map[HOST_UIDMAP_MAX];
	int			 i;

	if (host_read_file("/proc/self/status", buf, HOST_FILE_MAX) == -1) {
		host_err(ph->ph_status_error, sizeof(ph->ph_status_error),
		    "the fencer's status: %s", strerror(errno));
		return;
	}
	if (host_status_parse(buf, &self, ph->ph_status_error,
	    sizeof(ph->ph_status_error)) == -1)
		return;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (host_read_file(path, buf, HOST_FILE_MAX) == -1) {
		host_err(ph->ph_status_error, sizeof(ph->ph_status_error),
		    "%s: %s", path, strerror(errno));
		return;
	}
	if (host_status_parse(buf, &st, ph->ph_status_error,
	    sizeof(ph->ph_status_error)) == -1)
		return;
	for (i = 0; i < 4; i++)
		ph->ph_uid[i] = st.hs_uid[i];
	ph->ph_nspid_depth = st.hs_nspid_depth;
	ph->ph_nspid_self_depth = self.hs_nspid_depth;
	ph->ph_nspid_last = st.hs_nspid_last;
	ph->ph_seccomp = st.hs_seccomp;
	ph->ph_filters = st.hs_filters;
	ph->ph_filters_self = self.hs_filters;
	ph->ph_nnp = st.hs_nnp;
	for (i = 0; i < HOST_CAP_MAX; i++)
		ph->ph_cap[i] = st.hs_cap[i];

	/* Whose uids: the fencer's user namespace, or one of pid 1's own. */
	if (host_read_file("/proc/self/uid_map", self_map,
	    sizeof(self_map)) == -1) {
		host_err(ph->ph_status_error, sizeof(ph->ph_status_error),
		    "the fencer's uid_map: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	if (host_read_file(path, buf, HOST_FILE_MAX) == -1) {
		host_err(ph->ph_status_error, sizeof(ph->ph_status_error),
		    "%s: %s", path, strerror(errno));
		return;
	}
	if (host_uidmap_parse(buf, self_map, &ph->ph_userns_own,
	    &ph->ph_userns_root, ph->ph_status_error,
	    sizeof(ph->ph_status_error)) == -1)
		return;
	ph->ph_status_read = 1;
}

/* pid's mount table into fm: its count, or -1 with err set. */
static int
host_read_table(pid_t pid, char *buf, struct host_mount *fm, char *err,
    size_t errlen)
{
	char	 path[64];

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	if (host_read_file(path, buf, HOST_FILE_MAX) == -1) {
		host_err(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	return (host_mounts_parse(buf, fm, HOST_MOUNTS_MAX, HOST_MOUNTS_FENCE,
	    err, errlen));
}

/*
 * The mounts of files judged; where procs is another process (runsc's
 * sandbox, whose files the gofer serves), its own table must hold no
 * mount of a host filesystem at all.
 */
static void
host_read_mounts(pid_t procs, pid_t files, char *buf,
    const struct host_allow *allow, struct probe_host *ph)
{
	struct host_table	 ht;
	struct host_mount	*fm = NULL;
	const char		*names[HOST_ALLOW_MAX];
	int			 nf, i;

	memset(&ht, 0, sizeof(ht));
	if ((fm = calloc(HOST_MOUNTS_MAX, sizeof(*fm))) == NULL) {
		host_err(ph->ph_mounts_error, sizeof(ph->ph_mounts_error),
		    "%s", strerror(errno));
		goto done;
	}
	if (host_self_read("/proc/self/mountinfo", &ht, ph->ph_mounts_error,
	    sizeof(ph->ph_mounts_error)) == -1)
		goto done;
	if (procs != files) {
		ph->ph_files_apart = 1;
		if ((nf = host_read_table(procs, buf, fm, ph->ph_mounts_error,
		    sizeof(ph->ph_mounts_error))) == -1)
			goto done;
		ph->ph_inner_nhost = host_mounts_nhost(fm, nf, ht.ht_m,
		    ht.ht_n);
	}
	if ((nf = host_read_table(files, buf, fm, ph->ph_mounts_error,
	    sizeof(ph->ph_mounts_error))) == -1)
		goto done;
	for (i = 0; i < allow->ha_n && i < HOST_ALLOW_MAX; i++)
		names[i] = allow->ha_path[i];
	host_mounts_judge(fm, nf, ht.ht_m, ht.ht_n, names, i, allow->ha_root,
	    ph);
	ph->ph_mounts_read = 1;
 done:
	free(fm);
	host_table_free(&ht);
}

/*
 * Is pid 1's network namespace the fencer's, where the canary listens?
 * Each namespace has its own entries under /proc/PID/net, and
 * /proc/PID/net/tcp has the inode of its namespace's entry (numbers
 * from the same pool as /proc's own, unique while the namespace lives;
 * the fencer's lives as long as the fencer).  Equal inodes on the same
 * /proc: one namespace, so pid 1 lists every host socket, the canary
 * included.  (Scanning pid 1's net/tcp and tcp6 for the canary's inode
 * told the same and walked the kernel's whole established-connection
 * hash twice per file: 8 ms of the fencer's event loop per probe here.)
 * Reading /proc/PID/ns/net would need ptrace access to a non-dumpable
 * process, which the fencer does not have.
 */
static int
host_net_shared(pid_t pid, int *shared, char *err, size_t errlen)
{
	struct stat	 self, st;
	char		 path[64];

	if (stat("/proc/self/net/tcp", &self) == -1) {
		host_err(err, errlen, "the fencer's net/tcp: %s",
		    strerror(errno));
		return (-1);
	}
	snprintf(path, sizeof(path), "/proc/%d/net/tcp", (int)pid);
	if (stat(path, &st) == -1) {
		host_err(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	*shared = st.st_dev == self.st_dev && st.st_ino == self.st_ino;
	return (0);
}

static void
host_read_net(pid_t pid, uint64_t canary, char *buf, struct probe_host *ph)
{
	char		 path[64];
	int		 shared;

	if (canary == 0) {
		host_err(ph->ph_net_error, sizeof(ph->ph_net_error),
		    "no canary listener");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/net/dev", (int)pid);
	if (host_read_file(path, buf, HOST_FILE_MAX) == -1) {
		host_err(ph->ph_net_error, sizeof(ph->ph_net_error), "%s: %s",
		    path, strerror(errno));
		return;
	}
	if (host_netdev_parse(buf, ph, ph->ph_net_error,
	    sizeof(ph->ph_net_error)) == -1)
		return;
	if (host_net_shared(pid, &shared, ph->ph_net_error,
	    sizeof(ph->ph_net_error)) == -1)
		return;
	ph->ph_canary_seen = shared;
	ph->ph_net_read = 1;
}

/* Names from the kernel may hold any byte: printable ASCII only. */
static void
host_printable(char *s, size_t len)
{
	size_t	 i;

	for (i = 0; i < len && s[i] != '\0'; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			s[i] = '?';
	s[len - 1] = '\0';
}

void
host_read(pid_t pid, pid_t files, uint64_t canary,
    const struct host_allow *allow, struct probe_host *ph)
{
	uint32_t i;

	char	*buf;

	memset(ph, 0, sizeof(*ph));
	ph->ph_usr_ro = ph->ph_etc_ro = -1;
	buf = malloc(HOST_FILE_MAX);
	if (pid <= 0 || files <= 0 || buf == NULL) {
		host_err(ph->ph_status_error, sizeof(ph->ph_status_error),
		    "%s", pid <= 0 || files <= 0 ? "no pid 1" :
		    strerror(errno));
		strlcpy(ph->ph_mounts_error, ph->ph_status_error,
		    sizeof(ph->ph_mounts_error));
		strlcpy(ph->ph_net_error, ph->ph_status_error,
		    sizeof(ph->ph_net_error));
		goto done;
	}
	host_read_status(pid, buf, ph);
	host_read_mounts(pid, files, buf, allow, ph);
	host_read_net(pid, canary, buf, ph);
 done:
	host_printable(ph->ph_status_error, sizeof(ph->ph_status_error));
	host_printable(ph->ph_mounts_error, sizeof(ph->ph_mounts_error));
	host_printable(ph->ph_net_error, sizeof(ph->ph_net_error));
	host_printable(ph->ph_iface_other, sizeof(ph->ph_iface_other));
	for (i = 0; i < PROBE_HOST_BINDS_MAX; i++)
		host_printable(ph->ph_bad[i], sizeof(ph->ph_bad[i]));
	free(buf);
}
