/*
 * The backends a fence can be built with (backend.h), and each hook run
 * for every row.  A backend is one more row here and one more folder
 * beside native/; this is the one file outside those folders that names
 * one, and the fencer knows no other.  mock and subprocess are listed
 * only where FENCED_DEVELOPMENT_BACKENDS is defined (docs/backends.md):
 * the test build always, a release build with make
 * DEVELOPMENT_BACKENDS=1.
 */
#include <sys/types.h>

#include <stddef.h>

#include "fenced.h"
#include "log.h"
#include "names.h"
#include "fencer.h"
#include "backend.h"

#if FENCER_AGENT_WAIT_SEC > BOOT_AGENT_WAIT_MAX
#error "the default agent wait is longer than fencectl waits for a boot"
#endif

extern const struct fencer_backend	 backend_native;
extern const struct fencer_backend	 backend_runsc;
extern const struct fencer_backend	 backend_vm;
#ifdef FENCED_DEVELOPMENT_BACKENDS
extern const struct fencer_backend	 backend_mock;
extern const struct fencer_backend	 backend_subprocess;
#endif

static const struct fencer_backend *const fencer_backends[] = {
	&backend_native,
	&backend_runsc,
	&backend_vm,
#ifdef FENCED_DEVELOPMENT_BACKENDS
	&backend_mock,
	&backend_subprocess,
#endif
};
#define FENCER_NBACKENDS	(sizeof(fencer_backends) / \
				    sizeof(fencer_backends[0]))

/* The backend of that id, or NULL: not in this build. */
const struct fencer_backend *
fencer_backend(int id)
{
	size_t	 i;

	for (i = 0; i < FENCER_NBACKENDS; i++)
		if (fencer_backends[i]->fb_id == id)
			return (fencer_backends[i]);
	return (NULL);
}

/*
 * The first backend whose fences run on that kind of kernel
 * (fb_probe.pt_kernel: PROBE_KERNEL_*), the one that may earn its
 * levels (the host doctor's rows of L3 and L4), or 0: none here.
 */
int
fencer_backend_of_kernel(int kernel)
{
	size_t	 i;

	for (i = 0; i < FENCER_NBACKENDS; i++)
		if (fencer_backends[i]->fb_probe.pt_kernel == kernel)
			return (fencer_backends[i]->fb_id);
	return (0);
}

/* Why a backend has no entry: what its boot refusal says. */
const char *
fencer_backend_missing(int id)
{
	switch (id) {
	case BACKEND_MOCK:
	case BACKEND_SUBPROCESS:
		return ("a release build has no development backends (build "
		    "with make DEVELOPMENT_BACKENDS=1)");
	default:
		return ("this build has no such backend");
	}
}

/*
 * Each backend's start, once the daemon is configured.  A backend that
 * would wait for its agent longer than BOOT_AGENT_WAIT_MAX is a bug:
 * fencectl would give up on its boots while they may still come up.  So
 * is one with some of the fb_warm_* hooks but not all.
 */
void
fencer_backends_start(void)
{
	const struct fencer_backend *be;
	size_t	 i;
	int	 warm;

	for (i = 0; i < FENCER_NBACKENDS; i++) {
		be = fencer_backends[i];
		if (be->fb_agent_wait > BOOT_AGENT_WAIT_MAX)
			fatalx("%s: backend %s waits %d s for its agent, "
			    "more than BOOT_AGENT_WAIT_MAX", __func__,
			    backend_name(be->fb_id), be->fb_agent_wait);
		warm = (be->fb_warm_start != NULL) +
		    (be->fb_warm_reload != NULL) +
		    (be->fb_warm_refill != NULL) + (be->fb_warm_fini != NULL);
		if (warm != 0 && warm != 4)
			fatalx("%s: backend %s has %d of the 4 warm hooks",
			    __func__, backend_name(be->fb_id), warm);
		if (be->fb_start != NULL)
			be->fb_start();
	}
}

/* A child no fence has: a backend's own, or nobody's. */
int
fencer_backends_child(pid_t pid, int status)
{
	size_t	 i;

	for (i = 0; i < FENCER_NBACKENDS; i++)
		if (fencer_backends[i]->fb_child != NULL &&
		    fencer_backends[i]->fb_child(pid, status))
			return (1);
	return (0);
}

/*
 * Every backend has started: each gives up what it alone needed and
 * will not use here, before the fencer serves a boot.
 */
void
fencer_backends_lockdown(void)
{
	size_t	 i;

	for (i = 0; i < FENCER_NBACKENDS; i++)
		if (fencer_backends[i]->fb_lockdown != NULL)
			fencer_backends[i]->fb_lockdown();
}

/* Fences built ahead of boots (backend.h, fb_warm_*): each step. */
void
fencer_backends_warm_start(void)
{
	size_t	 i;

	for (i = 0; i < FENCER_NBACKENDS; i++)
		if (fencer_backends[i]->fb_warm_start != NULL)
			fencer_backends[i]->fb_warm_start();
}

void
fencer_backends_warm_reload(void)
{
	size_t	 i;

	for (i = 0; i < FENCER_NBACKENDS; i++)
		if (fencer_backends[i]->fb_warm_reload != NULL)
			fencer_backends[i]->fb_warm_reload();
}

void
fencer_backends_warm_refill(void)
{
	size_t	 i;

	for (i = 0; i < FENCER_NBACKENDS; i++)
		if (fencer_backends[i]->fb_warm_refill != NULL)
			fencer_backends[i]->fb_warm_refill();
}

void
fencer_backends_warm_fini(void)
{
	size_t	 i;

	for (i = 0; i < FENCER_NBACKENDS; i++)
		if (fencer_backends[i]->fb_warm_fini != NULL)
			fencer_backends[i]->fb_warm_fini();
}

/* The daemon stops: each backend ends what it runs of its own. */
void
fencer_backends_fini(void)
{
	size_t	 i;

	for (i = 0; i < FENCER_NBACKENDS; i++)
		if (fencer_backends[i]->fb_fini != NULL)
			fencer_backends[i]->fb_fini();
}
