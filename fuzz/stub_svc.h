/*
 * Stand-ins of the broker's fence service (broker/service.c) for the
 * fuzz targets of its front ends (ctl_fuzz, http_fuzz).  Each checks
 * what reaches it, as the real one relies on, and answers at once.
 */
#ifndef STUB_SVC_H
#define STUB_SVC_H

#include <sys/types.h>

/* Who the front end must say asks; set by the target per input. */
extern uid_t	 stub_uid;
extern int	 stub_admin;
extern int	 stub_unbounded;
extern int	 stub_errors;		/* answer every request with an error */
extern unsigned int stub_calls;		/* requests that reached the service */

#endif /* STUB_SVC_H */
