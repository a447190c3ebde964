#!/bin/sh
# Install the Debian packages fenced builds, tests and runs with, if any
# is missing.  When all are present this only asks dpkg and returns.
# The list holds every tool a test, `make run`, `make bench` or
# `make sanitize` runs that a debootstrap --variant=minbase system lacks
# (docs/testing.md), and those of minbase's own that the tests need, so
# that a smaller base cannot miss them either: procps (pgrep, ps), xxd,
# python3 (the forge and flood clients), iproute2 (ss), e2fsprogs
# (mkfs.ext4), mount (losetup), binutils (readelf), passwd (useradd),
# runsc (gVisor: the runsc backend and its tests), squashfs-tools
# (mksquashfs: images/fence-root, the vm backend's root), chromium,
# chromium-driver and python3-selenium (regress/page_test: the status
# page in a real headless browser, docs/page.md), openssl (the TLS
# listener of regress/proxy_test), libwslay-dev (the broker's WebSocket
# framing), libjs-xterm and node-xterm (the status page's terminal, served by
# the broker: libjs-xterm's stylesheet and node-xterm's modules, made
# into one script by scripts/xterm.sh, as libjs-xterm's own script is
# broken in Debian 12), python3-websocket (the tests' WebSocket client),
# and npm where no npm is on the PATH (regress/mcp_test's client, the
# official MCP SDK, installed by scripts/mcp-sdk.sh into the build
# directory; a machine whose Node.js brings its own npm keeps it),
# build-essential, dpkg-dev, debhelper and lintian (make deb: the
# Debian package, built with Debian's own tools, and regress/deb_test,
# docs/install.md).
set -eu

pkgs="gcc make pkg-config libevent-dev libseccomp-dev libcap-dev
libmsgpack-dev libbsd-dev libjansson-dev libatf-dev atf-sh kyua byacc
mandoc curl iproute2 bubblewrap git clang libclang-rt-14-dev passwd
procps xxd python3 e2fsprogs mount binutils runsc squashfs-tools
chromium chromium-driver python3-selenium openssl libwslay-dev
libjs-xterm node-xterm python3-websocket build-essential dpkg-dev
debhelper lintian"

missing=
for p in $pkgs; do
	s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$s" = installed ] || missing="$missing $p"
done
command -v npm > /dev/null 2>&1 || missing="$missing npm"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: run as root, or: apt-get install$missing" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2 || true
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
