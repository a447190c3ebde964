/*
 * Logging: to stderr in the foreground (-d), to syslog otherwise.
 * Every line of a child carries its process name.
 *
 * A line is known by its format (the same call in the same place): past
 * LOG_BURST of one format in a second, the rest of that second is only
 * counted, and the next line of that format after it says how many
 * were left out.  A client that makes us warn in a loop grows the log
 * by LOG_BURST lines a second per warning, not by what it sends.
 * fatal() and fatalx() are never held back.  Only where log_ratelimit()
 * turned it on: the daemon's children, which hear from clients; the
 * parent and the configuration parser say every line.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define LOG_BURST	20	/* lines of one format per second */
#define LOG_SLOTS	64	/* formats followed at once */

struct log_rate {
	const char	*lr_fmt;
	time_t		 lr_second;	/* monotonic */
	unsigned int	 lr_count;	/* in lr_second */
	unsigned long	 lr_held;	/* left out, not yet said */
};

static struct log_rate log_rates[LOG_SLOTS];

static char	*log_kept;		/* log_keep() */
static size_t	 log_keptlen;
static int	 log_debugging;		/* to stderr, not syslog */
static int	 log_limited;		/* log_ratelimit() */
static int	 log_verbose;
static const char *log_procname = "fenced";

void
log_init(int debug, int facility)
{
	log_debugging = debug;
	if (!debug)
		openlog("fenced", LOG_PID | LOG_NDELAY, facility);
	tzset();
}

void
log_procinit(const char *name)
{
	if (name != NULL)
		log_procname = name;
}

void
log_ratelimit(int on)
{
	log_limited = on;
}

void
log_setverbose(int v)
{
	log_verbose = v;
}

int
log_getverbose(void)
{
	return (log_verbose);
}

/*
 * While buf is set, every warning (log_warn, log_warnx) is kept in it
 * too, "; " between two, what does not fit left out: the parent answers
 * fencectl reload with why the file was refused, in the words the log
 * has.  log_keep(NULL, 0) stops.
 */
void
log_keep(char *buf, size_t len)
{
	log_kept = len > 0 ? buf : NULL;
	log_keptlen = len;
	if (log_kept != NULL)
		log_kept[0] = '\0';
}

static void
log_keep_line(int pri, const char *msg, int err)
{
	size_t	 n;

	if (log_kept == NULL || pri != LOG_ERR)
		return;
	n = strlen(log_kept);
	if (n + 1 >= log_keptlen)
		return;
	(void)snprintf(log_kept + n, log_keptlen - n, "%s%s%s%s",
	    n > 0 ? "; " : "", msg, err ? ": " : "", err ? strerror(err) : "");
}

static void
log_line(int pri, const char *msg)
{
	if (log_debugging)
		fprintf(stderr, "%s: %s\n", log_procname, msg);
	else
		syslog(pri, "%s: %s", log_procname, msg);
}

/*
 * May a line of fmt go out now?  A slot is chosen by the format's
 * address; two formats sharing one only share a budget, and a format
 * that takes over a slot first says what the last one held back.
 */
static int
log_allow(int pri, const char *fmt)
{
	struct log_rate	*lr;
	struct timespec	 ts;
	char		 msg[128];
	uintptr_t	 h = (uintptr_t)fmt;

	if (!log_limited || clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		return (1);
	lr = &log_rates[(h ^ (h >> 7) ^ (h >> 13)) % LOG_SLOTS];
	if (lr->lr_fmt != fmt || lr->lr_second != ts.tv_sec) {
		if (lr->lr_held > 0) {
			snprintf(msg, sizeof(msg), "last message repeated "
			    "%lu times", lr->lr_held);
			log_line(pri, msg);
		}
		lr->lr_fmt = fmt;
		lr->lr_second = ts.tv_sec;
		lr->lr_count = 0;
		lr->lr_held = 0;
	}
	if (lr->lr_count >= LOG_BURST) {
		lr->lr_held++;
		return (0);
	}
	lr->lr_count++;
	return (1);
}

void
vlog(int pri, const char *fmt, va_list ap)
{
	char	 msg[2048];
	int	 saved = errno;

	if (pri != LOG_CRIT && !log_allow(pri, fmt)) {
		errno = saved;
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_keep_line(pri, msg, 0);
	if (log_debugging)
		fprintf(stderr, "%s: %s\n", log_procname, msg);
	else
		syslog(pri, "%s: %s", log_procname, msg);
	errno = saved;
}

static void
vlog_errno(int pri, int err, const char *fmt, va_list ap)
{
	char	 msg[2048];

	if (pri != LOG_CRIT && !log_allow(pri, fmt))
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_keep_line(pri, msg, err);
	if (log_debugging)
		fprintf(stderr, "%s: %s%s%s\n", log_procname, msg,
		    err ? ": " : "", err ? strerror(err) : "");
	else
		syslog(pri, "%s: %s%s%s", log_procname, msg,
		    err ? ": " : "", err ? strerror(err) : "");
}

void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vlog_errno(LOG_ERR, saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	 ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vlog_errno(LOG_CRIT, saved, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}
