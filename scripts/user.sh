#!/bin/sh
# Create the unprivileged system user the broker and prober run as,
# if it is missing.  Name from $FENCED_USER, default _fenced.
set -eu
u=${FENCED_USER:-_fenced}
getent passwd "$u" >/dev/null && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "user: no user $u; run as root to create it" >&2
	exit 1
fi
useradd --system --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin --user-group "$u"
echo "user: created system user $u" >&2
