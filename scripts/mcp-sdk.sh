#!/bin/sh
# Install the official MCP SDK (npm's @modelcontextprotocol/sdk) into
# DIR (default build/npm) for regress/mcp_test.sh's client only: it is
# a test client, never linked or shipped (docs/mcp.md, "Tests").  Once
# there it is not fetched again.  Exits 1, saying why, when npm or its
# registry cannot be reached: the test then skips.
set -eu

dir=${1:-build/npm}
pkg=@modelcontextprotocol/sdk
ver=${MCP_SDK_VERSION:-1.32.2}	# the version the test was written against
if [ -f "$dir/node_modules/$pkg/package.json" ]; then
	exit 0
fi
command -v npm > /dev/null || { echo "mcp-sdk.sh: no npm" >&2; exit 1; }
# Into a directory of its own, then renamed into place: test cases that
# run at once each install, and the first whole one is kept.
mkdir -p "$(dirname "$dir")"
tmp=$(mktemp -d "$dir.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A private prefix: nothing global, no scripts of the packages run.
echo '{"private":true}' > "$tmp/package.json"
if ! (cd "$tmp" && timeout 30 npm install --no-audit --no-fund \
    --fetch-retries=1 --fetch-timeout=10000 --ignore-scripts \
    --loglevel=error "$pkg@$ver" >&2); then
	echo "mcp-sdk.sh: npm could not install $pkg@$ver" >&2
	exit 1
fi
mv -T "$tmp" "$dir" 2>/dev/null || [ -f "$dir/node_modules/$pkg/package.json" ]
