#!/bin/sh
# promtool, Prometheus's checker of the text format, for
# regress/metrics_test (docs/metrics.md, docs/testing.md): taken out of
# Debian's `prometheus' package without installing it (installing it
# would start a Prometheus server on the machine).  The package is
# fetched with apt-get download into DIR (default build/promtool) and
# unpacked there with dpkg -x, of which promtool alone is kept; nothing
# of it is configured or run.  Prints promtool's path, or exits 77 saying why not.
#
#	sh scripts/promtool.sh [DIR]
set -eu

dir=${1:-build/promtool}
tool="$dir/promtool"

if [ -x "$tool" ] && "$tool" --version > /dev/null 2>&1; then
	echo "$tool"
	exit 0
fi
if ! command -v apt-get > /dev/null || ! command -v dpkg > /dev/null; then
	echo "promtool: no apt-get or dpkg to take it from Debian" >&2
	exit 77
fi
mkdir -p "$dir"
# apt-get download writes into the current directory; as root it tries
# to drop to _apt, which must be able to write there.
chmod 0755 "$dir"
rm -f "$dir"/prometheus_*.deb
if ! (cd "$dir" && apt-get download -q prometheus) > "$dir/download.log" \
    2>&1; then
	echo "promtool: apt-get download prometheus failed (no network or" \
	    "no Debian repository?): $(tail -n 1 "$dir/download.log")" >&2
	exit 77
fi
# Only promtool is kept: the server and the rest go at once.
rm -rf "$dir/root"
dpkg -x "$dir"/prometheus_*.deb "$dir/root"
mv "$dir/root/usr/bin/promtool" "$tool"
rm -rf "$dir/root" "$dir"/prometheus_*.deb
if ! "$tool" --version > /dev/null 2>&1; then
	echo "promtool: $tool does not run" >&2
	exit 77
fi
echo "$tool"
