/*
 * The parent's own files beside parent/fenced.c: the daemon as a whole
 * (daemon.c), its claim on its fence uids (uidclaim.c) and the audit
 * log (audit.c).
 */
#ifndef PARENT_H
#define PARENT_H

#include <sys/types.h>

#include "fenced.h"

/* daemon.c */
int	daemon_start(const char *, char [DAEMON_ID_SIZE]);
void	daemon_fini(const char *, const char *, int);

/* uidclaim.c: where daemons claim their fence uids, machine-wide. */
#define UIDS_CLAIM_DIR		"/run/fenced-uids"
int	uids_claim(uid_t, uid_t, const char *, const char *);
void	uids_release(uid_t, uid_t, const char *, int);

/* audit.c: the audit log (docs/audit.md). */
struct msg_audit;
struct timespec;
int	audit_open(const struct fenced_config *);
void	audit_limits(const struct fenced_config *);
void	audit_close(void);
void	audit_write(const struct msg_audit *);
void	audit_refused(void);
char	*audit_line(const struct msg_audit *, const struct timespec *);
void	audit_read(uid_t, int, uint32_t, void (*)(void *, const char *),
	    void *);

#endif /* PARENT_H */
