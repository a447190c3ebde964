/*
 * The backends a fence can be built with (backend.h).  A backend is one
 * more entry here and one more folder beside native/; the fencer knows
 * no other.  mock and subprocess are listed only where
 * FENCED_DEVELOPMENT_BACKENDS is defined (docs/backends.md): the test
 * build always, a release build with make DEVELOPMENT_BACKENDS=1.
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

static const struct fencer_backend *const fencer_backends[] = {
	&backend_native,
	&backend_runsc,
	&backend_vm,
#ifdef FENCED_DEVELOPMENT_BACKENDS
	&backend_mock,
	&backend_subprocess,
#endif
};

/* The backend of that id, or NULL: not in this build. */
const struct fencer_backend *
fencer_backend(int id)
{
	size_t	 i;

	for (i = 0; i < sizeof(fencer_backends) / sizeof(fencer_backends[0]);
	    i++)
		if (fencer_backends[i]->fb_id == id)
			return (fencer_backends[i]);
	return (NULL);
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
 * fencectl would give up on its boots while they may still come up.
 */
void
fencer_backends_start(void)
{
	size_t	 i;

	for (i = 0; i < sizeof(fencer_backends) / sizeof(fencer_backends[0]);
	    i++) {
		if (fencer_backends[i]->fb_agent_wait > BOOT_AGENT_WAIT_MAX)
			fatalx("%s: backend %s waits %d s for its agent, "
			    "more than BOOT_AGENT_WAIT_MAX", __func__,
			    backend_name(fencer_backends[i]->fb_id),
			    fencer_backends[i]->fb_agent_wait);
		if (fencer_backends[i]->fb_start != NULL)
			fencer_backends[i]->fb_start();
	}
}

/* A child no fence has: a backend's own, or nobody's. */
int
fencer_backends_child(pid_t pid, int status)
{
	size_t	 i;

	for (i = 0; i < sizeof(fencer_backends) / sizeof(fencer_backends[0]);
	    i++)
		if (fencer_backends[i]->fb_child != NULL &&
		    fencer_backends[i]->fb_child(pid, status))
			return (1);
	return (0);
}

/* The daemon stops: each backend ends what it runs of its own. */
void
fencer_backends_fini(void)
{
	size_t	 i;

	for (i = 0; i < sizeof(fencer_backends) / sizeof(fencer_backends[0]);
	    i++)
		if (fencer_backends[i]->fb_fini != NULL)
			fencer_backends[i]->fb_fini();
}
