/*
 * t_probe_parse: feeds a report on standard input to report_parse() as
 * the prober would, with what the host knows given as options, and
 * prints the verdicts for regress/probe_test.sh:
 *
 *	t_probe_parse [-H] [-A tier] [-t tier] [-b backend]
 *	    [-c yes|no|none] [-C host:port] [-s secret] [-p pid]
 *	    [-n name=inode,...] [-e entry ...] [-a name:port]
 *	    [-r name:port] [-j] [-g path ...]
 *
 * -H fills in this host's boot_id and uname, as the fencer would.
 * -A fills in the host's reading of pid 1 (docs/probe.md, "What grants
 * each axis") as the fencer reads it from a native fence of that tier:
 * the report is then judged on its own account, which can only take a
 * level away.  Without -A there is no reading and no axis is granted.
 * Output: "level: L", "reason: ...", one "AXIS: VERDICT" line per axis
 * and one "violation: ..." line per violation; -j adds "json: ..." with
 * verdict_json().  -e adds an entry to the fence's egress list, -a and
 * -r name the targets the probe was asked to try through its proxy.
 * -b's backend lends the expectation what its entry in the fencer's
 * table declares (fb_probe), as the fencer's would.
 * Exit 0 if the report was well-formed, 1 if not.
 * With -g, only the values at the paths ("network.tcp.0.error") are
 * printed, one a line (strings bare, "missing" if absent), for the
 * shell to compare.
 */
#include <sys/types.h>
#include <sys/utsname.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "fenced.h"
#include "report.h"
#include "backend.h"

#define TP_INPUT_MAX	(4 * 1024 * 1024)
#define TP_GETS_MAX	32

/* The host's reading of a native fence of tier t (regress/report_test.c). */
static void
tp_assume(struct probe_expect *e, int t)
{
	struct probe_host	*h = &e->pe_host;
	int			 i;

	memset(h, 0, sizeof(*h));
	e->pe_has_host = 1;
	h->ph_status_read = h->ph_mounts_read = h->ph_net_read = 1;
	for (i = 0; i < 4; i++)
		h->ph_uid[i] = 61000;
	h->ph_nspid_depth = 2;
	h->ph_nspid_self_depth = 1;
	h->ph_nspid_last = 1;
	h->ph_seccomp = 2;
	h->ph_filters_self = 1;
	h->ph_filters = t == TIER_L1 ? 1 : 2;
	h->ph_nnp = 1;
	if (t == TIER_L1)
		h->ph_cap[HOST_CAP_BND] = 0x2411ebULL;
	h->ph_usr_ro = h->ph_etc_ro = 1;
	h->ph_nifaces = 1;
	if (t != TIER_L2) {
		h->ph_canary_seen = 1;
		h->ph_nifaces = 2;
		strlcpy(h->ph_iface_other, "eth0", sizeof(h->ph_iface_other));
	}
}

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr, "usage: t_probe_parse [-H] [-A tier] [-t tier] "
	    "[-b backend] "
	    "[-c yes|no|none]\n\t[-C host:port] [-s secret] [-p pid] "
	    "[-n name=inode,...] [-e entry ...]\n\t[-a name:port] "
	    "[-r name:port] [-j] [-g path ...]\n");
	exit(2);
}

static void
tp_host(struct probe_expect *e)
{
	struct utsname	 u;
	FILE		*f;

	if (uname(&u) == -1)
		err(2, "uname");
	strlcpy(e->pe_release, u.release, sizeof(e->pe_release));
	strlcpy(e->pe_version, u.version, sizeof(e->pe_version));
	if ((f = fopen("/proc/sys/kernel/random/boot_id", "r")) == NULL)
		err(2, "boot_id");
	if (fgets(e->pe_boot_id, sizeof(e->pe_boot_id), f) == NULL)
		errx(2, "boot_id: empty");
	e->pe_boot_id[strcspn(e->pe_boot_id, "\n")] = '\0';
	fclose(f);
}

static void
tp_ns(struct probe_expect *e, char *s)
{
	char	*item, *eq;

	while ((item = strsep(&s, ",")) != NULL) {
		if ((eq = strchr(item, '=')) == NULL)
			usage();
		*eq++ = '\0';
		if (strcmp(item, "pid") == 0)
			e->pe_ns_pid = strtoull(eq, NULL, 10);
		else if (strcmp(item, "net") == 0)
			e->pe_ns_net = strtoull(eq, NULL, 10);
		else if (strcmp(item, "mnt") == 0)
			e->pe_ns_mnt = strtoull(eq, NULL, 10);
	}
}

static char *
tp_read(size_t *len)
{
	char	*buf;
	ssize_t	 n;

	if ((buf = malloc(TP_INPUT_MAX)) == NULL)
		err(2, "malloc");
	*len = 0;
	while (*len < TP_INPUT_MAX &&
	    (n = read(STDIN_FILENO, buf + *len, TP_INPUT_MAX - *len)) > 0)
		*len += (size_t)n;
	return (buf);
}

/* The report's values at the paths, one a line. */
static int
tp_get(const char *buf, size_t len, char **paths, int npaths)
{
	json_t	*root, *v;
	char	*copy, *p, *seg, *s;
	int	 i;

	if ((root = json_loadb(buf, len, 0, NULL)) == NULL) {
		printf("unparsable\n");
		return (1);
	}
	for (i = 0; i < npaths; i++) {
		if ((copy = strdup(paths[i])) == NULL)
			err(2, "strdup");
		for (v = root, p = copy; v != NULL &&
		    (seg = strsep(&p, ".")) != NULL;)
			v = json_is_array(v) ? json_array_get(v, atoi(seg)) :
			    json_object_get(v, seg);
		free(copy);
		if (v == NULL)
			printf("missing\n");
		else if (json_is_string(v))
			printf("%s\n", json_string_value(v));
		else {
			s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			printf("%s\n", s != NULL ? s : "?");
			free(s);
		}
	}
	json_decref(root);
	return (0);
}

static void
tp_print(const struct probe_verdict *v, int json)
{
	const struct probe_axis_verdict	*a;
	char				*s;
	int				 i, j;

	printf("level: %s\n", level_name(v->pv_level));
	if (v->pv_reason[0] != '\0')
		printf("reason: %s\n", v->pv_reason);
	for (i = 0; i < AXIS_MAX; i++) {
		a = &v->pv_axes[i];
		printf("%s: %s\n", axis_name(i), verdict_name(a->av_verdict));
		for (j = 0; j < a->av_nviolations; j++)
			printf("violation: %s\n", a->av_violations[j]);
	}
	if (json) {
		if ((s = verdict_json(v)) == NULL)
			errx(2, "verdict_json failed");
		printf("json: %s\n", s);
		free(s);
	}
}

int
main(int argc, char *argv[])
{
	struct probe_expect	 e;
	struct probe_verdict	 v;
	const struct fencer_backend *be;
	char			*buf, *gets[TP_GETS_MAX];
	size_t			 len;
	int			 ch, json = 0, rv, ngets = 0, assume;

	memset(&e, 0, sizeof(e));
	e.pe_tier = TIER_L15;
	e.pe_backend = BACKEND_NATIVE;
	while ((ch = getopt(argc, argv, "a:A:b:c:C:e:g:Hjn:p:r:s:t:")) != -1) {
		switch (ch) {
		case 'a':
			strlcpy(e.pe_egress_allowed, optarg,
			    sizeof(e.pe_egress_allowed));
			break;
		case 'e':
			if (e.pe_negress == EGRESS_LIST_MAX)
				usage();
			strlcpy(e.pe_egress[e.pe_negress++], optarg,
			    sizeof(e.pe_egress[0]));
			break;
		case 'r':
			strlcpy(e.pe_egress_refused, optarg,
			    sizeof(e.pe_egress_refused));
			break;
		case 'A':
			if ((assume = tier_parse(optarg)) == -1)
				usage();
			tp_assume(&e, assume);
			break;
		case 'b':
			if ((e.pe_backend = backend_parse(optarg)) == -1)
				usage();
			break;
		case 'c':
			if (strcmp(optarg, "yes") == 0)
				e.pe_canary = CANARY_YES;
			else if (strcmp(optarg, "no") == 0)
				e.pe_canary = CANARY_NO;
			else if (strcmp(optarg, "none") == 0)
				e.pe_canary = CANARY_NOT_RUN;
			else
				usage();
			break;
		case 'C':
			strlcpy(e.pe_canary_target, optarg,
			    sizeof(e.pe_canary_target));
			break;
		case 'g':
			if (ngets == TP_GETS_MAX)
				usage();
			gets[ngets++] = optarg;
			break;
		case 'H':
			tp_host(&e);
			break;
		case 'j':
			json = 1;
			break;
		case 'n':
			tp_ns(&e, optarg);
			break;
		case 'p':
			e.pe_host_pid = (pid_t)strtol(optarg, NULL, 10);
			break;
		case 's':
			strlcpy(e.pe_secret, optarg, sizeof(e.pe_secret));
			break;
		case 't':
			if ((e.pe_tier = tier_parse(optarg)) == -1)
				usage();
			break;
		default:
			usage();
		}
	}
	if ((be = fencer_backend(e.pe_backend)) != NULL)
		e.pe_traits = be->fb_probe;
	buf = tp_read(&len);
	if (ngets > 0) {
		rv = tp_get(buf, len, gets, ngets);
		free(buf);
		return (rv);
	}
	rv = report_parse(buf, len, &e, &v);
	tp_print(&v, json);
	free(buf);
	return (rv == 0 ? 0 : 1);
}
