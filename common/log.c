/*
 * Logging: to stderr in the foreground (-d), to syslog otherwise.
 * Every line of a child carries its process name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static int	 log_debugging;		/* to stderr, not syslog */
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
log_setverbose(int v)
{
	log_verbose = v;
}

int
log_getverbose(void)
{
	return (log_verbose);
}

void
vlog(int pri, const char *fmt, va_list ap)
{
	char	 msg[2048];
	int	 saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
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

	vsnprintf(msg, sizeof(msg), fmt, ap);
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
