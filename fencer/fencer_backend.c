/*
 * The backends a fence can be built with (backend.h).  A backend of the
 * next issues (runsc, vm, mock, subprocess) is one more entry here and
 * one more folder beside native/; the fencer knows no other.
 */
#include <sys/types.h>

#include <stddef.h>

#include "fenced.h"
#include "backend.h"

static const struct fencer_backend *const fencer_backends[] = {
	&backend_native,
	&backend_runsc,
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

/* Each backend's start, once the daemon is configured. */
void
fencer_backends_start(void)
{
	size_t	 i;

	for (i = 0; i < sizeof(fencer_backends) / sizeof(fencer_backends[0]);
	    i++)
		if (fencer_backends[i]->fb_start != NULL)
			fencer_backends[i]->fb_start();
}
