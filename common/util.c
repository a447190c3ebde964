#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"

/* [a-z0-9][a-z0-9_-]{0,62}, and nothing else, ever. */
int
fence_key_valid(const char *key)
{
	size_t	 i, len;

	if (key == NULL)
		return (0);
	len = strnlen(key, FENCE_KEY_SIZE);
	if (len == 0 || len > FENCE_KEY_MAX)
		return (0);
	for (i = 0; i < len; i++) {
		char c = key[i];

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			continue;
		if (i > 0 && (c == '_' || c == '-'))
			continue;
		return (0);
	}
	return (1);
}

/* DAEMON_ID_LEN lower-case hex digits, and nothing else. */
int
daemon_id_valid(const char *id)
{
	size_t	 i;

	for (i = 0; i < DAEMON_ID_LEN; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f')))
			return (0);
	return (id[i] == '\0');
}

/*
 * As OpenBSD's: 0 when the buffers are equal, and the time it takes
 * depends on len only, never on where they differ.  For secrets: the
 * agent's bearer, the broker's token hashes.
 */
int
timingsafe_bcmp(const void *b1, const void *b2, size_t len)
{
	const volatile unsigned char	*p1 = b1, *p2 = b2;
	unsigned char			 diff = 0;
	size_t				 i;

	for (i = 0; i < len; i++)
		diff |= p1[i] ^ p2[i];
	return (diff != 0);
}

const char *
proc_name(enum fenced_proc p)
{
	switch (p) {
	case PROC_PARENT:
		return ("parent");
	case PROC_BROKER:
		return ("broker");
	case PROC_FENCER:
		return ("fencer");
	case PROC_PROBER:
		return ("prober");
	case PROC_EGRESS:
		return ("egress");
	default:
		return ("unknown");
	}
}

/* A stream connection to the unix socket at path, or -1 with errno. */
int
unix_connect(const char *path)
{
	struct sockaddr_un sun;
	int		 fd, saved;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, path, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return (-1);
	}
	return (fd);
}

/* A DNS name the probe may ask for: letters, digits, dots, dashes. */
int
probe_name_valid(const char *name)
{
	size_t	 n = strnlen(name, PROBE_NAME_LEN);

	return (n > 0 && n < PROBE_NAME_LEN && name[0] != '-' &&
	    name[0] != '.' && strspn(name, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") == n);
}

/* A SHA-256 as `vm kernel ... sha256' takes it: 64 lowercase hex digits. */
int
sha256_hex_valid(const char *s)
{
	size_t	 i;

	for (i = 0; i < VM_SHA256_HEX - 1; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return (0);
	return (s[i] == '\0');
}

/* host:port, the host a name or an IPv4 literal, or [IPv6]:port. */
int
probe_target_valid(const char *t)
{
	char		 host[PROBE_TARGET_LEN];
	const char	*colon, *errstr;
	size_t		 n = strnlen(t, PROBE_TARGET_LEN);

	if (n == 0 || n >= PROBE_TARGET_LEN ||
	    (colon = strrchr(t, ':')) == NULL || colon == t)
		return (0);
	(void)strtonum(colon + 1, 1, 65535, &errstr);
	if (errstr != NULL)
		return (0);
	memcpy(host, t, colon - t);
	host[colon - t] = '\0';
	if (host[0] == '[') {
		n = strlen(host);
		return (n > 2 && host[n - 1] == ']' &&
		    strspn(host + 1, "0123456789abcdefABCDEF:") == n - 2);
	}
	return (probe_name_valid(host));
}

/* A host name of origin_valid(): lowercase labels, no trailing dot. */
static int
origin_name_valid(const char *h, size_t n)
{
	size_t	 i, label = 0;

	if (n == 0)
		return (0);
	for (i = 0; i < n; i++) {
		if (h[i] == '.') {
			if (label == 0 || h[i - 1] == '-')
				return (0);
			label = 0;
			continue;
		}
		if (!((h[i] >= 'a' && h[i] <= 'z') ||
		    (h[i] >= '0' && h[i] <= '9') || h[i] == '-'))
			return (0);
		if (label == 0 && h[i] == '-')
			return (0);
		if (++label > 63)
			return (0);
	}
	return (label != 0 && h[n - 1] != '-');
}

/*
 * An origin as a browser sends it in Origin: "http://" or "https://",
 * a host (a lowercase name, an IPv4 literal or a bracketed IPv6 one)
 * and a port only if it is not the scheme's default, which a browser
 * leaves out.  Nothing else: no path, no slash, no user, no dot at the
 * end of the name.
 */
int
http_origin_valid(const char *o)
{
	char		 host[HTTP_ORIGIN_LEN];
	struct in6_addr	 a6;
	const char	*h, *end, *port = NULL, *errstr;
	size_t		 n = strnlen(o, HTTP_ORIGIN_LEN), hl;
	long long	 p;
	int		 https;

	if (n == 0 || n >= HTTP_ORIGIN_LEN)
		return (0);
	if (strncmp(o, "http://", 7) == 0) {
		https = 0;
		h = o + 7;
	} else if (strncmp(o, "https://", 8) == 0) {
		https = 1;
		h = o + 8;
	} else
		return (0);
	end = o + n;
	if (h[0] == '[') {
		if ((end = strchr(h, ']')) == NULL)
			return (0);
		end++;
		if (*end == ':')
			port = end + 1;
		else if (*end != '\0')
			return (0);
	} else if ((port = strchr(h, ':')) != NULL)
		end = port++;
	hl = end - h;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (host[0] == '[') {
		host[hl - 1] = '\0';
		if (strspn(host + 1, "0123456789abcdef:.") != hl - 2 ||
		    inet_pton(AF_INET6, host + 1, &a6) != 1)
			return (0);
	} else if (!origin_name_valid(host, hl))
		return (0);
	if (port != NULL) {
		if (port[0] < '1' || port[0] > '9' ||
		    strspn(port, "0123456789") != strlen(port))
			return (0);
		p = strtonum(port, 1, 65535, &errstr);
		if (errstr != NULL || p == (https ? 443 : 80))
			return (0);
	}
	return (1);
}

/* A lowercase hex digit's value, or -1. */
int
hexdigit(int c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	return (-1);
}

/*
 * Whether a list of words separated by spaces (a cgroup's controllers,
 * as cgroup.controllers and cgroup.subtree_control show them) holds word.
 */
int
word_listed(const char *list, const char *word)
{
	size_t		 len = strlen(word);
	const char	*p;

	for (p = list; (p = strstr(p, word)) != NULL; p += len)
		if ((p == list || p[-1] == ' ') &&
		    (p[len] == ' ' || p[len] == '\n' || p[len] == '\0'))
			return (1);
	return (0);
}

/*
 * DIR/FILE, a small file (a cgroup's, a /proc one), read once into buf
 * and NUL-terminated: at most len - 1 bytes.  -1 with errno when it
 * cannot be opened or read, or the path does not fit.
 */
int
file_read_small(const char *dir, const char *file, char *buf, size_t len)
{
	char	 path[PATH_MAX];
	ssize_t	 n;
	int	 fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, len - 1);
	(void)close(fd);
	if (n < 0)
		return (-1);
	buf[n] = '\0';
	return (0);
}

/*
 * len bytes of buf with nfds descriptors (1 to 3) in one message on s:
 * what sendmsg() returns, tried again on EINTR.
 */
ssize_t
send_fds(int s, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(3 * sizeof(int))];
	}		 cm;
	struct cmsghdr	*c;
	struct msghdr	 msg;
	struct iovec	 iov;
	ssize_t		 n;

	if (nfds < 1 || nfds > 3) {
		errno = EINVAL;
		return (-1);
	}
	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = (void *)buf;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	do
		n = sendmsg(s, &msg, MSG_NOSIGNAL);
	while (n == -1 && errno == EINTR);
	return (n);
}
