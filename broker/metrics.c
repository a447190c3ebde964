/*
 * The daemon's counters and histograms, for the metrics of admins
 * (docs/metrics.md): boots, execs and probes by result, egress
 * decisions, denials by layer, and how long a boot, a fence's first
 * answer and an exec took.  The fence service counts (svc_metrics.c
 * and its rooms call in here); svc_metrics() renders them with what
 * the records and the fencer say, in the Prometheus text format
 * (version 0.0.4), through the writers at the end of this file.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "broker.h"

static const char *const metrics_boot_names[METRICS_BOOT_N] = {
	[METRICS_BOOT_OK] =		"ok",
	[METRICS_BOOT_REFUSED] =	"refused",
	[METRICS_BOOT_FAILED] =		"failed",
	[METRICS_BOOT_NOT_MET] =	"require_not_met",
	[METRICS_BOOT_ABANDONED] =	"abandoned",
};

static const char *const metrics_exec_names[METRICS_EXEC_N] = {
	[METRICS_EXEC_ZERO] =		"exit_zero",
	[METRICS_EXEC_NONZERO] =	"exit_nonzero",
	[METRICS_EXEC_SIGNAL] =		"signal",
	[METRICS_EXEC_TIMEOUT] =	"timeout",
	[METRICS_EXEC_ERROR] =		"error",
};

/* The layers a denial is counted by; another is no denial of ours. */
static const char *const metrics_layers[] = {
	"seccomp", "landlock", "egress", "limit"
};

/* The probes' levels, by enum probe_level, and one for no verdict. */
#define METRICS_LEVELS		(LEVEL_L4 + 1)

/*
 * Seconds, upper bounds: a native boot takes milliseconds, a vm's
 * seconds; an exec up to EXEC_TIMEOUT_MAX (60 s) and its wait.
 */
static const char *const metrics_le_text[] = {
	"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25",
	"0.5", "1", "2.5", "5", "10", "30", "60", "120"
};
static const double metrics_le[] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
	0.5, 1, 2.5, 5, 10, 30, 60, 120
};
#define METRICS_BUCKETS		nitems(metrics_le)

struct metrics_histo {
	uint64_t	 h_bucket[METRICS_BUCKETS];	/* not cumulative */
	uint64_t	 h_count;
	double		 h_sum;
};

static const struct {
	const char	*mh_name;
	const char	*mh_help;
} metrics_hist_names[METRICS_HIST_N] = {
	[METRICS_HIST_BOOT] = { "fenced_boot_seconds",
	    "From a boot request to the fence up (before its first probe)." },
	[METRICS_HIST_FIRST] = { "fenced_first_answer_seconds",
	    "From a boot request to the fence's first verdict, when what "
	    "waited for it is sent." },
	[METRICS_HIST_EXEC] = { "fenced_exec_seconds",
	    "From an exec request to its last answer." },
};

static struct {
	uint64_t	 m_boots[METRICS_BOOT_N];
	uint64_t	 m_execs[METRICS_EXEC_N];
	uint64_t	 m_probes[METRICS_LEVELS + 1];	/* last: none */
	uint64_t	 m_egress[2];			/* refused, allowed */
	uint64_t	 m_egress_bytes[2];		/* out, in */
	uint64_t	 m_denials[nitems(metrics_layers)];
	struct metrics_histo m_hist[METRICS_HIST_N];
} metrics;

static void
metrics_add(uint64_t *c, uint64_t n)
{
	*c = *c > UINT64_MAX - n ? UINT64_MAX : *c + n;
}

void
metrics_boot(enum metrics_boot result)
{
	if (result < METRICS_BOOT_N)
		metrics_add(&metrics.m_boots[result], 1);
}

void
metrics_exec(enum metrics_exec result)
{
	if (result < METRICS_EXEC_N)
		metrics_add(&metrics.m_execs[result], 1);
}

/* A probe ended: its verdict's level, or -1 without one. */
void
metrics_probe(int level)
{
	if (level < 0 || level >= METRICS_LEVELS)
		level = METRICS_LEVELS;
	metrics_add(&metrics.m_probes[level], 1);
}

/* An egress decision of the proxy, and what the connection carried. */
void
metrics_egress(int allowed, uint64_t out, uint64_t in)
{
	metrics_add(&metrics.m_egress[allowed != 0], 1);
	metrics_add(&metrics.m_egress_bytes[0], out);
	metrics_add(&metrics.m_egress_bytes[1], in);
}

/*
 * n denials at a layer ("seccomp", "landlock", "egress", "limit"), as
 * whoever learns of them reports them; a layer not in the table is a
 * caller's mistake, logged and not counted.
 */
void
metrics_denial(const char *layer, uint32_t n)
{
	size_t	 i;

	for (i = 0; i < nitems(metrics_layers); i++)
		if (strcmp(layer, metrics_layers[i]) == 0) {
			metrics_add(&metrics.m_denials[i], n);
			return;
		}
	log_warnx("%s: no layer %s", __func__, layer);
}

/* The time since t0 (CLOCK_MONOTONIC) into histogram which. */
void
metrics_observe(enum metrics_hist which, const struct timespec *t0)
{
	struct metrics_histo *h;
	struct timespec	 now;
	double		 s;
	size_t		 i;

	if (which >= METRICS_HIST_N || (t0->tv_sec == 0 && t0->tv_nsec == 0))
		return;
	h = &metrics.m_hist[which];
	clock_gettime(CLOCK_MONOTONIC, &now);
	s = (double)(now.tv_sec - t0->tv_sec) +
	    (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
	if (s < 0)
		s = 0;
	for (i = 0; i < METRICS_BUCKETS; i++)
		if (s <= metrics_le[i]) {
			h->h_bucket[i]++;
			break;
		}
	h->h_count++;
	h->h_sum += s;
}

/* Writers of the text format. */

/* A family's HELP and TYPE lines; help is ours, plain ASCII. */
void
metrics_family(struct evbuffer *b, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

/*
 * A label's value, quoted and escaped as the format wants (backslash,
 * double quote, newline); anything outside printable ASCII is written
 * as '?', so a value from a user never makes a line of its own.
 */
void
metrics_value(struct evbuffer *b, const char *v)
{
	const unsigned char *p;

	evbuffer_add(b, "\"", 1);
	for (p = (const unsigned char *)v; *p != '\0'; p++) {
		if (*p == '\\' || *p == '"')
			evbuffer_add_printf(b, "\\%c", *p);
		else if (*p == '\n')
			evbuffer_add(b, "\\n", 2);
		else if (*p < 0x20 || *p > 0x7e)
			evbuffer_add(b, "?", 1);
		else
			evbuffer_add(b, p, 1);
	}
	evbuffer_add(b, "\"", 1);
}

/* name{label="value"} n, or name n with label NULL. */
void
metrics_sample(struct evbuffer *b, const char *name, const char *label,
    const char *value, uint64_t n)
{
	evbuffer_add_printf(b, "%s", name);
	if (label != NULL) {
		evbuffer_add_printf(b, "{%s=", label);
		metrics_value(b, value);
		evbuffer_add(b, "}", 1);
	}
	evbuffer_add_printf(b, " %" PRIu64 "\n", n);
}

static void
metrics_counters(struct evbuffer *b, const char *name, const char *help,
    const char *label, const char *const *names, const uint64_t *n,
    size_t count)
{
	size_t	 i;

	metrics_family(b, name, "counter", help);
	for (i = 0; i < count; i++)
		metrics_sample(b, name, label, names[i], n[i]);
}

static void
metrics_histogram(struct evbuffer *b, enum metrics_hist which)
{
	const struct metrics_histo *h = &metrics.m_hist[which];
	const char	*name = metrics_hist_names[which].mh_name;
	uint64_t	 cum = 0;
	size_t		 i;

	metrics_family(b, name, "histogram",
	    metrics_hist_names[which].mh_help);
	for (i = 0; i < METRICS_BUCKETS; i++) {
		cum += h->h_bucket[i];
		evbuffer_add_printf(b, "%s_bucket{le=\"%s\"} %" PRIu64 "\n",
		    name, metrics_le_text[i], cum);
	}
	evbuffer_add_printf(b, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n"
	    "%s_sum %.6f\n%s_count %" PRIu64 "\n", name, h->h_count, name,
	    h->h_sum, name, h->h_count);
}

/* Every counter and histogram of this file. */
void
metrics_render(struct evbuffer *b)
{
	static const char *const egress_names[] = { "refused", "allowed" };
	static const char *const bytes_names[] = { "out", "in" };
	const char	*levels[METRICS_LEVELS + 1];
	size_t		 i;

	metrics_counters(b, "fenced_boots_total", "Boots by result.",
	    "result", metrics_boot_names, metrics.m_boots, METRICS_BOOT_N);
	metrics_counters(b, "fenced_execs_total", "Commands run by an exec, "
	    "by how they ended.", "result", metrics_exec_names,
	    metrics.m_execs, METRICS_EXEC_N);
	for (i = 0; i < METRICS_LEVELS; i++)
		levels[i] = level_name((int)i);
	levels[METRICS_LEVELS] = "failed";
	metrics_counters(b, "fenced_probes_total", "Probes by the level "
	    "their verdict gave, or failed without one.", "level", levels,
	    metrics.m_probes, METRICS_LEVELS + 1);
	metrics_counters(b, "fenced_egress_decisions_total", "Connections "
	    "of the egress proxy by decision.", "result", egress_names,
	    metrics.m_egress, 2);
	metrics_counters(b, "fenced_egress_bytes_total", "Bytes the egress "
	    "proxy relayed, out of fences and back in.", "direction",
	    bytes_names, metrics.m_egress_bytes, 2);
	metrics_counters(b, "fenced_denials_total", "Denials by the layer "
	    "that made them.", "layer", metrics_layers, metrics.m_denials,
	    nitems(metrics_layers));
	for (i = 0; i < METRICS_HIST_N; i++)
		metrics_histogram(b, (enum metrics_hist)i);
}
