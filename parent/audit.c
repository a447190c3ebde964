/*
 * The audit log (docs/audit.md): one JSON line per event the broker
 * reports (IMSG_AUDIT), written by the parent alone, which may write
 * it.  The broker sends typed fields, never a line; it may be
 * compromised, so every field was bounded by the codec
 * (imsg/msg_audit.c) and each line is built here with jansson, ASCII
 * only: every control byte, quote and backslash of a field is escaped,
 * and no newline but the line's own end reaches the file.
 *
 * The file is root's, mode 0600, in a directory of root's that nobody
 * else may write (so nobody else can put a link where it goes), opened
 * O_APPEND|O_NOFOLLOW.  Past `audit size' bytes it is rotated by
 * renames in that directory: audit.log.1 ... audit.log.N (`audit
 * keep').  A write that fails (a full disk) never stops the daemon: the
 * lines lost are counted, said once in the log, and written as one
 * "dropped" line when writing works again.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "parent.h"

#define AUDIT_READ_MAX		(1U << 20)	/* bytes of a file's tail */

static struct {
	int		 fd;		/* the file, or -1 */
	int		 dfd;		/* its directory */
	char		 dir[PATH_MAX];
	char		 base[NAME_MAX + 1];
	uint64_t	 size;		/* bytes in the file now */
	uint64_t	 max;		/* `audit size' */
	uint32_t	 keep;		/* `audit keep' */
	uint64_t	 dropped;	/* lines lost since the last written */
	const char	*dropped_why;
	int		 failing;	/* said in the log once */
} audit = { -1, -1, "", "", 0, 0, 0, 0, NULL, 0 };

static int	audit_set_str(json_t *, const char *, const char *);
static int	audit_set_int(json_t *, const char *, json_int_t);

static int
audit_set_str(json_t *o, const char *name, const char *s)
{
	/* The codec took valid UTF-8 alone; NULL here is a bug. */
	return (json_object_set_new(o, name, json_string(s)));
}

static int
audit_set_int(json_t *o, const char *name, json_int_t v)
{
	return (json_object_set_new(o, name, json_integer(v)));
}

static int
audit_exec_fields(json_t *o, const struct msg_audit *a)
{
	json_t		*argv;
	uint32_t	 i, n;
	int		 rv = 0;

	if (a->au_text[0] != '\0')
		rv |= audit_set_str(o, "command", a->au_text);
	else {
		if ((argv = json_array()) == NULL)
			return (-1);
		n = a->au_nargs < AUDIT_ARGS_MAX ? a->au_nargs : AUDIT_ARGS_MAX;
		for (i = 0; i < n; i++)
			rv |= json_array_append_new(argv,
			    json_string(a->au_argv[i]));
		rv |= json_object_set_new(o, "argv", argv);
		rv |= audit_set_int(o, "argc", a->au_nargs);
	}
	if (a->au_cwd[0] != '\0')
		rv |= audit_set_str(o, "cwd", a->au_cwd);
	/* How it ended: "exit" or "signal" and its number. */
	if (a->au_what[0] != '\0')
		rv |= audit_set_int(o, a->au_what, (json_int_t)a->au_num);
	if (a->au_truncated || a->au_nargs > AUDIT_ARGS_MAX)
		rv |= json_object_set_new(o, "truncated", json_true());
	return (rv);
}

static int
audit_file_fields(json_t *o, const struct msg_audit *a)
{
	return (audit_set_str(o, "path", a->au_text) |
	    audit_set_int(o, "bytes", (json_int_t)a->au_num) |
	    (a->au_truncated ? json_object_set_new(o, "truncated",
	    json_true()) : 0));
}

static int
audit_term_fields(json_t *o, const struct msg_audit *a)
{
	return (audit_set_str(o, "action", a->au_what) |
	    audit_set_int(o, "term", (json_int_t)a->au_num));
}

static int
audit_port_fields(json_t *o, const struct msg_audit *a)
{
	return (audit_set_int(o, "port", (json_int_t)a->au_num) |
	    audit_set_str(o, "from", a->au_text));
}

static int
audit_stop_fields(json_t *o, const struct msg_audit *a)
{
	return (audit_set_str(o, "why", a->au_what));
}

static int
audit_token_fields(json_t *o, const struct msg_audit *a)
{
	return (audit_set_str(o, "action", a->au_what) |
	    audit_set_str(o, "name", a->au_text));
}

static int
audit_denial_fields(json_t *o, const struct msg_audit *a)
{
	return (audit_set_str(o, "layer", a->au_what) |
	    audit_set_str(o, "what", a->au_text) |
	    audit_set_int(o, "count", (json_int_t)a->au_num));
}

/* Each kind's name in the line and the fields only it has. */
static const struct audit_kind_row {
	const char	*ak_name;
	int		(*ak_fields)(json_t *, const struct msg_audit *);
} audit_kinds[AUDIT_KIND_MAX + 1] = {
	[AUDIT_BOOT] =		{ "boot", NULL },
	[AUDIT_EXEC] =		{ "exec", audit_exec_fields },
	[AUDIT_FILE] =		{ "file", audit_file_fields },
	[AUDIT_TERM] =		{ "terminal", audit_term_fields },
	[AUDIT_PORT] =		{ "port", audit_port_fields },
	[AUDIT_STOP] =		{ "stop", audit_stop_fields },
	[AUDIT_TOKEN] =		{ "token", audit_token_fields },
	[AUDIT_DENIAL] =	{ "denial", audit_denial_fields },
};

static const char *const audit_vias[] = {
	[AUDIT_VIA_CONTROL] =	"control",
	[AUDIT_VIA_HTTP] =	"http",
	[AUDIT_VIA_DAEMON] =	"daemon",
};

/* RFC 3339, UTC, milliseconds: 2026-12-07T02:03:04.567Z. */
static void
audit_time(const struct timespec *ts, char *buf, size_t len)
{
	struct tm	 tm;
	char		 sec[32];

	if (gmtime_r(&ts->tv_sec, &tm) == NULL ||
	    strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		(void)strlcpy(sec, "1970-01-01T00:00:00", sizeof(sec));
	(void)snprintf(buf, len, "%s.%03ldZ", sec, ts->tv_nsec / 1000000);
}

/* The common head of every line: when and what. */
static json_t *
audit_head(const struct timespec *ts, const char *kind)
{
	json_t		*o;
	char		 when[64];

	if ((o = json_object()) == NULL)
		return (NULL);
	audit_time(ts, when, sizeof(when));
	if (audit_set_str(o, "time", when) == -1 ||
	    audit_set_str(o, "kind", kind) == -1) {
		json_decref(o);
		return (NULL);
	}
	return (o);
}

/*
 * o as one line, its newline added; NULL when it cannot be.  jansson
 * escapes every byte below 0x20 and, ASCII only, every character above
 * 0x7e; DEL it leaves as it is, and here it becomes \u007f (it can
 * only be inside a string: the names are ours).  So the line holds
 * 0x20..0x7e alone, and its newline.
 */
static char *
audit_dump(json_t *o)
{
	char		*s, *line;
	size_t		 n, i, o_len, dels = 0;

	s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII |
	    JSON_PRESERVE_ORDER);
	json_decref(o);
	if (s == NULL)
		return (NULL);
	n = strlen(s);
	for (i = 0; i < n; i++)
		dels += s[i] == 0x7f;
	if ((line = malloc(n + dels * 5 + 2)) == NULL) {
		free(s);
		return (NULL);
	}
	for (i = o_len = 0; i < n; i++) {
		if (s[i] == 0x7f) {
			memcpy(line + o_len, "\\u007f", 6);
			o_len += 6;
		} else
			line[o_len++] = s[i];
	}
	free(s);
	line[o_len] = '\n';
	line[o_len + 1] = '\0';
	return (line);
}

/*
 * One event as its line, malloc'ed, or NULL.  The event was checked by
 * msg_audit_decode(); this is what the unit test gives hostile fields.
 */
char *
audit_line(const struct msg_audit *a, const struct timespec *ts)
{
	json_t		*o;
	int		 rv = 0;

	if (a->au_kind < AUDIT_BOOT || a->au_kind > AUDIT_KIND_MAX ||
	    a->au_via < AUDIT_VIA_CONTROL || a->au_via > AUDIT_VIA_DAEMON)
		return (NULL);
	if ((o = audit_head(ts, audit_kinds[a->au_kind].ak_name)) == NULL)
		return (NULL);
	rv |= audit_set_int(o, "uid", a->au_uid);
	rv |= audit_set_str(o, "via", audit_vias[a->au_via]);
	if (a->au_token[0] != '\0')
		rv |= audit_set_str(o, "token", a->au_token);
	if (a->au_key[0] != '\0')
		rv |= audit_set_str(o, "fence", a->au_key);
	if (a->au_owner != MSG_OWNER_NONE)
		rv |= audit_set_int(o, "owner", a->au_owner);
	rv |= audit_set_str(o, "outcome", a->au_outcome);
	if (audit_kinds[a->au_kind].ak_fields != NULL)
		rv |= audit_kinds[a->au_kind].ak_fields(o, a);
	if (rv != 0) {
		json_decref(o);
		return (NULL);
	}
	return (audit_dump(o));
}

/* The line that says how many were lost, and why. */
static char *
audit_dropped_line(const struct timespec *ts)
{
	json_t		*o;

	if ((o = audit_head(ts, "dropped")) == NULL)
		return (NULL);
	if (audit_set_int(o, "count", (json_int_t)audit.dropped) == -1 ||
	    audit_set_str(o, "why", audit.dropped_why) == -1) {
		json_decref(o);
		return (NULL);
	}
	return (audit_dump(o));
}

static void
audit_drop(const char *why)
{
	audit.dropped++;
	audit.dropped_why = why;
}

/*
 * The directory: ours (root's), and nobody else may write it, so no
 * other user can put a link or a file where the log goes or its
 * rotations land.  Made 0750 if missing (its parent must exist).
 */
static int
audit_open_dir(const char *dir)
{
	struct stat	 st;
	int		 fd;

	if (mkdir(dir, 0750) == -1 && errno != EEXIST) {
		log_warn("audit log: mkdir %s", dir);
		return (-1);
	}
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		log_warn("audit log: %s", dir);
		return (-1);
	}
	if (fstat(fd, &st) == -1 || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		log_warnx("audit log: %s is not a directory of %s that only "
		    "it may write", dir, geteuid() == 0 ? "root" : "ours");
		close(fd);
		return (-1);
	}
	return (fd);
}

/* The file itself: a regular file of ours, one link, 0600. */
static int
audit_open_file(void)
{
	struct stat	 st;
	int		 fd;

	if ((fd = openat(audit.dfd, audit.base, O_WRONLY | O_APPEND |
	    O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600)) == -1) {
		log_warn("audit log: %s/%s", audit.dir, audit.base);
		return (-1);
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || st.st_nlink != 1 ||
	    ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) == -1)) {
		log_warnx("audit log: %s/%s is not a regular file of ours "
		    "with one link", audit.dir, audit.base);
		close(fd);
		return (-1);
	}
	audit.size = (uint64_t)st.st_size;
	audit.fd = fd;
	return (0);
}

void
audit_close(void)
{
	if (audit.fd != -1)
		close(audit.fd);
	if (audit.dfd != -1)
		close(audit.dfd);
	audit.fd = audit.dfd = -1;
}

/*
 * Open the log of c (c_audit_log, resolved: absolute, or "" for none)
 * for appending.  Returns 0, or -1 having said why in the log.
 */
int
audit_open(const struct fenced_config *c)
{
	char		*slash;

	audit_close();
	audit.max = c->c_audit_size;
	audit.keep = c->c_audit_keep;
	if (c->c_audit_log[0] == '\0')
		return (0);
	slash = strrchr(c->c_audit_log, '/');
	if (c->c_audit_log[0] != '/' || slash == NULL || slash[1] == '\0' ||
	    strlen(slash + 1) >= sizeof(audit.base) ||
	    strcmp(slash + 1, ".") == 0 || strcmp(slash + 1, "..") == 0) {
		log_warnx("audit log: %s is not an absolute path of a file",
		    c->c_audit_log);
		return (-1);
	}
	(void)strlcpy(audit.base, slash + 1, sizeof(audit.base));
	if (slash == c->c_audit_log)
		(void)strlcpy(audit.dir, "/", sizeof(audit.dir));
	else
		(void)snprintf(audit.dir, sizeof(audit.dir), "%.*s",
		    (int)(slash - c->c_audit_log), c->c_audit_log);
	if ((audit.dfd = audit_open_dir(audit.dir)) == -1)
		return (-1);
	if (audit_open_file() == -1) {
		audit_close();
		return (-1);
	}
	return (0);
}

/* The limits of a reload, the file kept as it is. */
void
audit_limits(const struct fenced_config *c)
{
	audit.max = c->c_audit_size;
	audit.keep = c->c_audit_keep;
}

/*
 * audit.log -> audit.log.1 -> ... -> audit.log.KEEP (the oldest gone),
 * each a rename in the directory, then a new file.  With keep 0 the
 * full file is removed.  Returns 0, or -1 (said once) with the old
 * file still open: lines go on, past the bound, rather than lost.
 */
static int
audit_rotate(void)
{
	char		 from[NAME_MAX + 16], to[NAME_MAX + 16];
	uint32_t	 i;
	int		 old = audit.fd;

	for (i = audit.keep; i > 1; i--) {
		(void)snprintf(from, sizeof(from), "%s.%u", audit.base, i - 1);
		(void)snprintf(to, sizeof(to), "%s.%u", audit.base, i);
		if (renameat(audit.dfd, from, audit.dfd, to) == -1 &&
		    errno != ENOENT)
			goto fail;
	}
	if (audit.keep == 0) {
		if (unlinkat(audit.dfd, audit.base, 0) == -1)
			goto fail;
	} else {
		(void)snprintf(to, sizeof(to), "%s.1", audit.base);
		if (renameat(audit.dfd, audit.base, audit.dfd, to) == -1)
			goto fail;
	}
	audit.fd = -1;
	if (audit_open_file() == -1) {
		if (audit.keep == 0)
			close(old);	/* removed: a line there is lost */
		else
			audit.fd = old;	/* the renamed file, still ours */
		return (-1);
	}
	close(old);
	return (0);
 fail:
	if (!audit.failing)
		log_warn("audit log: rotating %s/%s", audit.dir, audit.base);
	audit.failing = 1;
	return (-1);
}

/* One line into the file, rotating first when it would pass the bound. */
static int
audit_put(const char *line)
{
	size_t		 len = strlen(line);
	ssize_t		 n = -1;

	if (audit.fd != -1 && audit.max > 0 && audit.size > 0 &&
	    audit.size + len > audit.max)
		(void)audit_rotate();
	/* No file since a rotation could not make one: try again. */
	if (audit.fd != -1 || audit_open_file() == 0)
		n = write(audit.fd, line, len);
	if (n == (ssize_t)len) {
		audit.size += len;
		return (0);
	}
	if (n > 0) {
		/* A part: end it, so that the next line stands alone. */
		audit.size += n;
		if (write(audit.fd, "\n", 1) == 1)
			audit.size++;
	}
	if (!audit.failing)
		log_warn("audit log: write %s/%s, lines dropped until it "
		    "works again", audit.dir, audit.base);
	audit.failing = 1;
	return (-1);
}

/*
 * An event from the broker, decoded (a payload that does not decode is
 * the caller's to refuse): into the file, after the count of those
 * lost before it.
 */
void
audit_write(const struct msg_audit *a)
{
	struct timespec	 ts;
	char		*line;

	if (audit.dfd == -1)
		return;		/* `audit off' */
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	if (audit.dropped > 0 && (line = audit_dropped_line(&ts)) != NULL) {
		if (audit_put(line) == 0)
			audit.dropped = 0;
		free(line);
	}
	if ((line = audit_line(a, &ts)) == NULL) {
		audit_drop("format");
		return;
	}
	if (audit_put(line) == -1)
		audit_drop("write");
	else if (audit.failing && audit.dropped == 0) {
		log_info("audit log: writing again");
		audit.failing = 0;
	}
	free(line);
}

/* An event the parent's rate refused: counted, written later. */
void
audit_refused(void)
{
	if (audit.dfd != -1)
		audit_drop("rate");
}

/* Whether the line (len bytes, no newline) is uid's: its uid or owner. */
static int
audit_line_of(const char *line, size_t len, uid_t uid)
{
	json_t		*o, *v;
	json_error_t	 err;
	int		 mine = 0;

	if ((o = json_loadb(line, len, 0, &err)) == NULL)
		return (0);
	if (((v = json_object_get(o, "uid")) != NULL &&
	    json_is_integer(v) && json_integer_value(v) == (json_int_t)uid) ||
	    ((v = json_object_get(o, "owner")) != NULL &&
	    json_is_integer(v) && json_integer_value(v) == (json_int_t)uid))
		mine = 1;
	json_decref(o);
	return (mine);
}

/*
 * The tail of one file of the log (at most AUDIT_READ_MAX bytes, whole
 * lines), newest line first into found[] until count are there.
 */
static void
audit_read_file(const char *name, uid_t uid, int admin, uint32_t count,
    char **found, uint32_t *nfound)
{
	struct stat	 st;
	char		*buf = NULL, *start, *end, *nl, *line;
	off_t		 off;
	ssize_t		 n;
	size_t		 len;
	int		 fd;

	if ((fd = openat(audit.dfd, name, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC | O_NONBLOCK)) == -1)
		return;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_size == 0)
		goto done;
	off = st.st_size > AUDIT_READ_MAX ? st.st_size - AUDIT_READ_MAX : 0;
	len = (size_t)(st.st_size - off);
	if ((buf = malloc(len + 1)) == NULL ||
	    (n = pread(fd, buf, len, off)) <= 0)
		goto done;
	buf[n] = '\0';
	start = buf;
	/* A line cut by the window's start is no line. */
	if (off > 0 && (start = strchr(buf, '\n')) != NULL)
		start++;
	/* Nor one the writer has not ended yet. */
	end = start != NULL ? strrchr(start, '\n') : NULL;
	while (end != NULL && end > start && *nfound < count) {
		*end = '\0';
		nl = strrchr(start, '\n');
		line = nl != NULL ? nl + 1 : start;
		if (end - line > 0 && (size_t)(end - line) < AUDIT_LINE_MAX &&
		    (admin || audit_line_of(line, end - line, uid)) &&
		    (found[*nfound] = strdup(line)) != NULL)
			(*nfound)++;
		end = nl;
	}
 done:
	free(buf);
	close(fd);
}

/*
 * `fencectl show audit': the last count lines that are uid's (every
 * line for an admin), oldest first, each to fn.  Only the tail of the
 * log and of its .1 is read (AUDIT_READ_MAX bytes each), so a request
 * holds the parent a few milliseconds at most.
 */
void
audit_read(uid_t uid, int admin, uint32_t count,
    void (*fn)(void *, const char *), void *arg)
{
	char		 name[NAME_MAX + 16], **found;
	uint32_t	 nfound = 0, i;

	if (audit.dfd == -1 || count == 0)
		return;
	if ((found = calloc(count, sizeof(*found))) == NULL)
		return;
	audit_read_file(audit.base, uid, admin, count, found, &nfound);
	(void)snprintf(name, sizeof(name), "%s.1", audit.base);
	if (nfound < count && audit.keep > 0)
		audit_read_file(name, uid, admin, count, found, &nfound);
	for (i = nfound; i > 0; i--) {
		fn(arg, found[i - 1]);
		free(found[i - 1]);
	}
	free(found);
}
