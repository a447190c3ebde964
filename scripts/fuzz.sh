#!/bin/sh
# Build the libFuzzer targets of fenced's parsers (fuzz/*_fuzz.c) with
# clang, AddressSanitizer and UBSan, and run each for a bounded time:
#
#	sh scripts/fuzz.sh BUILD SECONDS [TARGET...]
#
# TARGET is a name of fuzz/NAME_fuzz.c (report, msg, imsg, ...); none
# means every one, run one after the other.  Everything goes to
# BUILD-fuzz/ (build-fuzz for the default build): the objects in obj/,
# the targets in bin/, new inputs in corpus/NAME, crashes in
# artifacts/NAME/.  The seeds in fuzz/corpus/NAME/ are read, never
# written.  `sh scripts/fuzz.sh BUILD 0 NAME` builds only;
# `sh scripts/fuzz.sh BUILD seeds` writes the seeds of msg, imsg and ctl
# with the project's own encoders (fuzz/mkseeds.c).  docs/fuzzing.md.
#
# Exit 77, naming what is missing, when clang, libFuzzer or a library is
# not there; 2 for a bad argument; otherwise 0 when nothing was found,
# or the status of the first target that found something, 70 for a
# crash or a broken invariant, 71 for a hang (libFuzzer's own 77 would
# read as "skipped" to atf and kyua; its input is
# named on stderr).
set -eu

build=${1:-build}
secs=${2:-60}
[ $# -ge 2 ] && shift 2 || shift $#
top=$(cd "$(dirname "$0")/.." && pwd)
case "$build" in
/*) out=${build%/}-fuzz ;;
*) out=$top/${build%/}-fuzz ;;
esac
CLANG=${CLANG:-clang}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
YACC=${YACC:-byacc}
PKGS="libevent libseccomp libcap msgpack libbsd-overlay jansson libmd"

case "$secs" in
seeds) ;;
''|*[!0-9]*) echo "fuzz: SECONDS must be a number, not '$secs'" >&2; exit 2 ;;
esac

all=$(cd "$top/fuzz" && ls ./*_fuzz.c | sed 's|^\./||; s|_fuzz\.c$||')
[ $# -gt 0 ] || set -- $all
for t in "$@"; do
	[ -f "$top/fuzz/${t}_fuzz.c" ] || {
		echo "fuzz: no target '$t' (there are: $(echo $all))" >&2
		exit 2
	}
done

if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "fuzz: $CLANG not found (Debian: clang)" >&2
	exit 77
fi
# shellcheck disable=SC2086
if ! libs=$($PKG_CONFIG --libs $PKGS 2>/dev/null) ||
    ! pkgcflags=$($PKG_CONFIG --cflags $PKGS 2>/dev/null); then
	echo "fuzz: a library of $PKGS not found by $PKG_CONFIG" >&2
	exit 77
fi
# libwslay (broker/ws.c) ships no pkg-config file.
libs="$libs -lwslay"
mkdir -p "$out/obj" "$out/bin"
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\n{ return 0; }\n' \
    > "$out/probe.c"
if ! "$CLANG" -fsanitize=fuzzer -o "$out/probe" "$out/probe.c" \
    >"$out/probe.log" 2>&1; then
	echo "fuzz: $CLANG cannot link -fsanitize=fuzzer (Debian: libclang-rt-14-dev)" >&2
	exit 77
fi

FLAGS="-std=gnu11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer
    -fsanitize=address,undefined -fno-sanitize-recover=all
    -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wpointer-arith
    -Wmissing-prototypes -Wstrict-prototypes $pkgcflags
    -I$top/common -I$top/imsg -I$top/parent -I$top/broker -I$top/fencer
    -I$top/prober -I$top/fencer/native -I$top/fencer/runsc -I$top/fencer/vm
    -I$top/egress -I$out/gen"

# The sources each target links besides its own file: the parsers it
# drives and what they call.  Everything is compiled with coverage
# (-fsanitize=fuzzer-no-link), so libFuzzer sees inside the parsers.
LIBSRC="common/names.c common/util.c common/log.c imsg/mp.c imsg/msg.c
    imsg/msg_codec.c imsg/msg_audit.c imsg/msg_fence.c imsg/msg_probe.c imsg/msg_token.c
    imsg/msg_agent.c imsg/msg_proc.c imsg/msg_files.c imsg/msg_stream.c
    imsg/msg_egress.c imsg/msg_tunnel.c imsg/msg_term.c imsg/msg_port.c
    imsg/msg_usage.c imsg/msg_denial.c
    common/egress_list.c"
srcs_of() {
	case "$1" in
	report)	echo "prober/report.c prober/report_schema.c prober/level.c" ;;
	msg)	echo "" ;;
	imsg)	echo "imsg/imsg.c" ;;
	ctl)	echo "imsg/imsg.c broker/files.c broker/inflight.c
		    broker/control_fence.c broker/control_file.c
		    broker/control_admin.c broker/splice.c
		    broker/control_port.c broker/ticket.c fuzz/stub_svc.c" ;;
	http)	echo "broker/http.c broker/http_frame.c broker/http_reply.c
		    broker/http_cors.c broker/http_api.c broker/http_api_render.c
		    broker/http_api_read.c broker/http_api_boot.c
		    broker/http_api_exec.c broker/http_snap.c broker/http_host.c
		    broker/http_page.c gen/page.c broker/http_procs.c
		    broker/http_stream.c broker/http_files.c broker/files.c
		    broker/inflight.c broker/http_takeover.c broker/http_head.c
		    broker/http_ports.c broker/relay.c broker/relay_auth.c
		    broker/ticket.c broker/http_term.c broker/http_channel.c
		    broker/http_channel_ops.c broker/http_channel_take.c
		    broker/ws.c
		    parent/config.c fuzz/stub_svc.c" ;;
	config)	echo "parent/config.c gen/parse.c" ;;
	runsc)	echo "fencer/runsc/runsc_parse.c" ;;
	vmconsole) echo "fencer/vm/vm_console.c" ;;
	host)	echo "fencer/fencer_host.c" ;;
	egress)	echo "egress/egress_req.c egress/egress_addr.c egress/egress_dns.c" ;;
	ws)	echo "broker/ws.c" ;;
	relay)	echo "broker/http_head.c" ;;
	*)	echo "" ;;
	esac
}

# Objects built with other flags (another clang, another tree) go.
echo "$CLANG $FLAGS" | cmp -s - "$out/obj/flags" 2>/dev/null || {
	rm -f "$out"/obj/*.o
	echo "$CLANG $FLAGS" > "$out/obj/flags"
}

# newer A B: is file A newer than file B (POSIX test has no -nt)?
newer() {
	[ -n "$(find "$1" -prune -newer "$2")" ]
}

# Compile one source to its object unless the object is newer than it
# and than every header of the tree.
compile() {
	src=$1
	case "$src" in
	gen/*) path=$out/$src ;;
	*) path=$top/$src ;;
	esac
	obj=$out/obj/$(echo "$src" | tr / _ | sed 's/\.c$/.o/')
	if [ -f "$obj" ] && ! newer "$path" "$obj" &&
	    [ -z "$(find "$top/common" "$top/imsg" "$top/broker" "$top/parent" \
	    "$top/fencer" "$top/prober" -name '*.h' -newer "$obj" | head -1)" ]
	then
		echo "$obj"
		return 0
	fi
	extra=
	case "$src" in
	gen/*) extra="-Wno-unused-but-set-variable -Wno-sign-compare
	    -Wno-missing-prototypes" ;;
	esac
	# Renamed into place: the cases of fuzz_test may build at once.
	# shellcheck disable=SC2086
	"$CLANG" $FLAGS $extra -fsanitize=fuzzer-no-link -c -o "$obj.$$" \
	    "$path" >&2 || { rm -f "$obj.$$"; return 1; }
	mv -f "$obj.$$" "$obj"
	echo "$obj"
}

if [ ! -f "$out/gen/parse.c" ] || newer "$top/parent/parse.y" "$out/gen/parse.c"
then
	mkdir -p "$out/gen"
	if ! command -v "$YACC" >/dev/null 2>&1; then
		echo "fuzz: $YACC not found (Debian: byacc)" >&2
		exit 77
	fi
	"$YACC" -o "$out/gen/parse.c.$$" "$top/parent/parse.y"
	mv -f "$out/gen/parse.c.$$" "$out/gen/parse.c"
fi

# The status page's files, as the GNUmakefile compiles them in.
page_files=$(ls "$top"/broker/page/* | sort)
# shellcheck disable=SC2086
if [ ! -f "$out/gen/page.c" ] || [ -n "$(find "$top/scripts/page.sh" \
    "$top/broker/page" $page_files -newer "$out/gen/page.c" | head -1)" ]
then
	mkdir -p "$out/gen"
	# shellcheck disable=SC2086
	sh "$top/scripts/page.sh" $page_files > "$out/gen/page.c.$$"
	mv -f "$out/gen/page.c.$$" "$out/gen/page.c"
fi

# The seeds the project's own encoders make (fuzz/mkseeds.c), written
# over fuzz/corpus/{msg,imsg,ctl}: run by hand, the output committed.
if [ "$secs" = seeds ]; then
	objs=
	for s in $LIBSRC parent/config.c fuzz/mkseeds.c; do
		objs="$objs $(compile "$s")" || exit 1
	done
	# shellcheck disable=SC2086
	"$CLANG" -fsanitize=fuzzer-no-link,address,undefined \
	    -o "$out/bin/mkseeds" $objs $libs
	exec "$out/bin/mkseeds" "$top/fuzz/corpus"
fi

# A run is bounded by its count of inputs (FUZZ_RUNS, default none:
# by time alone) and by SECONDS: make check's short runs count inputs,
# so that a loaded machine runs as many as an idle one (only slower),
# with SECONDS the bound that stops a hang.
runs=${FUZZ_RUNS:--1}
case "$runs" in
-1) ;;
''|*[!0-9]*) echo "fuzz: FUZZ_RUNS must be a number, not '$runs'" >&2; exit 2 ;;
esac

rc=0
# The cases of fuzz_test run at once under a parallel kyua: one builds
# at a time (flock), so the objects they share are compiled once.
exec 9>"$out/build.lock"
for t in "$@"; do
	objs=
	flock 9
	for s in $LIBSRC $(srcs_of "$t") fuzz/${t}_fuzz.c; do
		objs="$objs $(compile "$s")" || exit 1
	done
	# shellcheck disable=SC2086
	"$CLANG" -fsanitize=fuzzer,address,undefined \
	    -o "$out/bin/${t}_fuzz.$$" $objs $libs
	mv -f "$out/bin/${t}_fuzz.$$" "$out/bin/${t}_fuzz"
	flock -u 9
	[ "$secs" -gt 0 ] || continue

	mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
	dict=
	[ -f "$top/fuzz/$t.dict" ] && dict=-dict=$top/fuzz/$t.dict
	seeds=$top/fuzz/corpus/$t
	[ -d "$seeds" ] || seeds=
	echo "fuzz: running $t for $secs s" >&2
	st=0
	# shellcheck disable=SC2086
	(cd "$out/artifacts/$t" && "$out/bin/${t}_fuzz" \
	    -max_total_time="$secs" -runs="$runs" -max_len=65536 -timeout=10 \
	    -error_exitcode=70 -timeout_exitcode=71 \
	    -rss_limit_mb=2048 -print_final_stats=1 $dict \
	    -artifact_prefix="$out/artifacts/$t/" \
	    "$out/corpus/$t" $seeds) || st=$?
	if [ $st -ne 0 ]; then
		echo "fuzz: $t found something (status $st): $(ls "$out/artifacts/$t" | head -3)" >&2
		[ $rc -ne 0 ] || rc=$st
	fi
done
exit $rc
