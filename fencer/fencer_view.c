/*
 * What a fence sees of the host (fencer_view.h): the one table, read by
 * the native backend's mounts and the runsc backend's bundle alike.
 */
#include <sys/types.h>

#include <stddef.h>

#include "names.h"
#include "fencer_view.h"

/*
 * Every host path bound into a fence, and where (a check of a fence's
 * mount table from the host reads this).  VIEW_HOME is the sandbox home
 * at /home/<user>; the merged-/usr names appear only where the host has
 * real directories there; the /proc masks are /dev/null bound over
 * files of the fence's own /proc.
 */
const struct view_bind view_binds[] = {
	{ "/usr",		"/usr",		VIEW_RO },
	{ "/etc",		"/etc",		VIEW_RO },
	{ "/bin",		"/bin",		VIEW_LINKDIR },
	{ "/sbin",		"/sbin",	VIEW_LINKDIR },
	{ "/lib",		"/lib",		VIEW_LINKDIR },
	{ "/lib64",		"/lib64",	VIEW_LINKDIR },
	{ "/lib32",		"/lib32",	VIEW_LINKDIR },
	{ "/libx32",		"/libx32",	VIEW_LINKDIR },
	{ NULL,			"/home/<user>",	VIEW_HOME },
	{ "/dev/null",		"/dev/null",	VIEW_DEV },
	{ "/dev/zero",		"/dev/zero",	VIEW_DEV },
	{ "/dev/full",		"/dev/full",	VIEW_DEV },
	{ "/dev/random",	"/dev/random",	VIEW_DEV },
	{ "/dev/urandom",	"/dev/urandom",	VIEW_DEV },
	{ "/dev/tty",		"/dev/tty",	VIEW_DEV },
	{ "/dev/null",		"/proc/<masked file>", VIEW_MASK },
};
const size_t view_nbinds = nitems(view_binds);
_Static_assert(nitems(view_binds) <= VIEW_BINDS_MAX, "VIEW_BINDS_MAX");

const char *const view_bin_names[] = { "fence-agent", "fence-probe" };
const size_t view_nbin_names = nitems(view_bin_names);
