/*
 * What a fence sees of the host, whatever backend builds it: one
 * description (fencer_view.c), so that every backend shows a fence the
 * same host and whoever reads a fence's mount table from the host can
 * tell an expected bind from anything else.  The native backend mounts
 * it (native/fence_mount.c); the runsc backend writes it into its OCI
 * bundle (runsc/bundle.c); the probe's host reading allows it and
 * nothing else of the host (fencer_probe.c, probe_allow()).
 *
 *	view_binds[]	every host path bound into a fence, and where:
 *			the read-only system folders (/usr, /etc), the
 *			merged-/usr names (bound read-only where the host
 *			has a real folder, the same link where it has
 *			one), the sandbox home, the device nodes and the
 *			/proc masks
 *	FENCE_BIN_DIR	the bin folder: where the fence finds the
 *			programs of view_bin_names[], copies of the
 *			daemon's, never its folder (which holds fenced and
 *			fencectl too)
 */
#ifndef FENCER_VIEW_H
#define FENCER_VIEW_H

#include <stddef.h>

/* Where the fence finds the binaries of fenced (bound read-only). */
#define FENCE_BIN_DIR		"/run/fenced/bin"

enum view_kind {
	VIEW_RO,		/* bound read-only at the same path */
	VIEW_LINKDIR,		/* a merged-/usr name: as VIEW_RO where the
				   host has a real dir, its link where the
				   host has a link, nothing else */
	VIEW_HOME,		/* the sandbox home, read-write */
	VIEW_DEV,		/* a device node */
	VIEW_MASK		/* bound over a file of the fence's /proc */
};

struct view_bind {
	const char		*vb_src;	/* host path; NULL: the home */
	const char		*vb_dst;	/* path inside */
	enum view_kind		 vb_kind;
};

#define VIEW_BINDS_MAX		32	/* rows of view_binds[], at most */

extern const struct view_bind	 view_binds[];
extern const size_t		 view_nbinds;
/* The programs a fence may run from FENCE_BIN_DIR, besides its init. */
extern const char *const	 view_bin_names[];
extern const size_t		 view_nbin_names;

#endif /* FENCER_VIEW_H */
