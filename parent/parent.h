/*
 * The parent's own files beside parent/fenced.c: the daemon as a whole
 * (daemon.c) and its claim on its fence uids (uidclaim.c).
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

#endif /* PARENT_H */
