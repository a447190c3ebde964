#!/bin/sh
# Print one browser script of xterm.js 3.8 made from Debian's node-xterm
# (the CommonJS modules of /usr/share/nodejs/xterm/lib), for the status
# page's /xterm.js (docs/page.md, "The terminal").
#
# Why not libjs-xterm's /usr/share/javascript/xterm/xterm.js: in Debian
# 12 that file is a 288-byte wrapper that calls require("./public/
# Terminal"), which no browser has; the modules it needs ship in
# node-xterm, the same source package and version.  This script wraps
# each module in a function of its own and adds a require() that finds
# them by path, as a CommonJS bundler would; no eval, nothing fetched
# at run time, so the page's CSP (default-src 'self') holds.  It
# defines window.Terminal with the fit addon applied.
#
# Usage: xterm.sh [LIBDIR]; LIBDIR defaults to Debian's.  A missing
# package, a module missing or a require() that names no module of the
# package stops the build.
set -eu

lib=${1:-/usr/share/nodejs/xterm/lib}
if [ ! -f "$lib/public/Terminal.js" ]; then
	echo "xterm.sh: no $lib/public/Terminal.js: install Debian's" \
	    "node-xterm (scripts/deps.sh)" >&2
	exit 1
fi

# The modules: the library less its tests and the addons but fit.
mods=$(cd "$lib" && find . -name '*.js' ! -name '*.test.js' \
    ! -path './addons/*' | sed 's|^\./||; s|\.js$||' | sort)
mods="$mods addons/fit/fit"

# Every relative require() of every module must name one of them.
for m in $mods; do
	dir=$(dirname "$m")
	for r in $(grep -o 'require("[^"]*")' "$lib/$m.js" |
	    sed 's/^require("//; s/")$//'); do
		case "$r" in
		./* | ../*) ;;
		*)	echo "xterm.sh: $m.js requires $r, not a module" \
			    "of the package" >&2
			exit 1 ;;
		esac
		p=$(cd "$lib/$dir" && realpath -m --relative-to="$lib" "$r")
		[ -f "$lib/$p.js" ] || {
			echo "xterm.sh: $m.js requires $r: no $p.js" >&2
			exit 1
		}
	done
done

echo "/* xterm.js $(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' \
    "$lib/../package.json" | head -n 1) (MIT), from Debian's node-xterm,"
echo " * made into one script by fenced's scripts/xterm.sh; do not edit. */"
echo "(function () {"
echo "var defs = {}, done = {};"
for m in $mods; do
	echo "defs[\"$m\"] = function (exports, require, module) {"
	# A source map names a file the page does not serve.
	sed '/^\/\/# sourceMappingURL=/d' "$lib/$m.js"
	echo "};"
done
cat <<'EOF'
function resolve(from, name) {
	var parts = from.split("/");
	var i, seg = name.split("/");

	parts.pop();
	for (i = 0; i < seg.length; i++) {
		if (seg[i] === "..")
			parts.pop();
		else if (seg[i] !== ".")
			parts.push(seg[i]);
	}
	return parts.join("/");
}
function load(id) {
	var m;

	if (Object.prototype.hasOwnProperty.call(done, id))
		return done[id].exports;
	if (!Object.prototype.hasOwnProperty.call(defs, id))
		throw new Error("xterm.js: no module " + id);
	m = { exports: {} };
	done[id] = m;
	defs[id].call(m.exports, m.exports, function (name) {
		return load(resolve(id, name));
	}, m);
	return m.exports;
}
var Terminal = load("public/Terminal").Terminal;
Terminal.applyAddon(load("addons/fit/fit"));
window.Terminal = Terminal;
})();
EOF
