/*
 * The one table of each name the daemon shows: configuration, API,
 * fencectl and the logs all spell a tier, a level, a state or a stop
 * reason from here.  libc only, so every program may link it.
 */
#include <stddef.h>
#include <string.h>

#include "names.h"

struct name {
	int		 n_id;
	const char	*n_name;
};

static const struct name tier_names[] = {
	{ TIER_L1,		"L1" },
	{ TIER_L15,		"L1.5" },
	{ TIER_L2,		"L2" }
};

static const struct name backend_names[] = {
	{ BACKEND_NATIVE,	"native" },
	{ BACKEND_RUNSC,	"runsc" },
	{ BACKEND_VM,		"vm" },
	{ BACKEND_MOCK,		"mock" },
	{ BACKEND_SUBPROCESS,	"subprocess" }
};

static const struct name inner_names[] = {
	{ INNER_NONE,		"none" },
	{ INNER_RUNSC,		"runsc" }
};

static const struct name level_names[] = {
	{ LEVEL_UNMEASURED,	"unmeasured" },
	{ LEVEL_NOT_EARNED,	"not-earned" },
	{ LEVEL_L1,		"L1" },
	{ LEVEL_L15,		"L1.5" },
	{ LEVEL_L2,		"L2" },
	{ LEVEL_L3,		"L3" },
	{ LEVEL_L4,		"L4" }
};

static const struct name state_names[] = {
	{ FENCE_BOOTING,	"booting" },
	{ FENCE_RUNNING,	"running" },
	{ FENCE_STOPPING,	"stopping" },
	{ FENCE_STOPPED,	"stopped" },
	{ FENCE_FAILED,		"failed" }
};

static const struct name stop_reason_names[] = {
	{ STOP_REQUEST,		"request" },
	{ STOP_DEADLINE,	"deadline" },
	{ STOP_CRASH,		"crash" },
	{ STOP_OOM,		"out-of-memory" },
	{ STOP_SHUTDOWN,	"shutdown" }
};

static const char *
name_find(const struct name *t, size_t n, int id)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (t[i].n_id == id)
			return (t[i].n_name);
	return (NULL);
}

static int
name_parse(const struct name *t, size_t n, const char *s)
{
	size_t	 i;

	if (s == NULL)
		return (-1);
	for (i = 0; i < n; i++)
		if (strcmp(t[i].n_name, s) == 0)
			return (t[i].n_id);
	return (-1);
}

const char *
tier_name(int tier)
{
	const char	*s = name_find(tier_names, nitems(tier_names), tier);

	return (s != NULL ? s : "unknown");
}

int
tier_parse(const char *s)
{
	return (name_parse(tier_names, nitems(tier_names), s));
}

const char *
backend_name(int backend)
{
	const char	*s;

	s = name_find(backend_names, nitems(backend_names), backend);
	return (s != NULL ? s : "unknown");
}

int
backend_parse(const char *s)
{
	return (name_parse(backend_names, nitems(backend_names), s));
}

int
inner_parse(const char *s)
{
	return (name_parse(inner_names, nitems(inner_names), s));
}

/* Anything that is not a level was not measured. */
const char *
level_name(int level)
{
	const char	*s;

	s = name_find(level_names, nitems(level_names), level);
	return (s != NULL ? s : "unmeasured");
}

int
level_parse(const char *s)
{
	return (name_parse(level_names, nitems(level_names), s));
}

const char *
fence_state_name(int state)
{
	const char	*s = name_find(state_names, nitems(state_names), state);

	return (s != NULL ? s : "unknown");
}

const char *
stop_reason_name(int reason)
{
	return (name_find(stop_reason_names, nitems(stop_reason_names),
	    reason));
}

/* Does a fence that measured `have' meet a requirement of `want'? */
int
level_satisfies(int have, int want)
{
	if (want <= LEVEL_UNMEASURED)
		return (1);
	return (have >= LEVEL_L1 && have >= want);
}

/*
 * What `require' may name: a level a fence can earn, L1 to L4 (L3 and
 * L4 only the runsc and vm backends can).  -1 for anything else.
 */
int
require_parse(const char *s)
{
	int	 l = level_parse(s);

	return (l >= LEVEL_L1 && l <= LEVEL_L4 ? l : -1);
}

/*
 * `require' with the layer inside: "L4+runsc" is L4 measured by a vm
 * fence booted with `inner runsc', whose probe's reading shows gVisor's
 * kernel inside the guest's (docs/vm.md); *inner is INNER_RUNSC then,
 * INNER_CONFIGURED for a level alone.  -1 for anything else.
 */
int
require_parse_inner(const char *s, int *inner)
{
	static const char	 suffix[] = "+runsc";
	char			 level[8];
	size_t			 n = strlen(s);

	*inner = INNER_CONFIGURED;
	if (n <= sizeof(suffix) - 1 ||
	    strcmp(s + n - (sizeof(suffix) - 1), suffix) != 0)
		return (require_parse(s));
	n -= sizeof(suffix) - 1;
	if (n >= sizeof(level))
		return (-1);
	memcpy(level, s, n);
	level[n] = '\0';
	if (level_parse(level) != LEVEL_L4)
		return (-1);
	*inner = INNER_RUNSC;
	return (LEVEL_L4);
}
