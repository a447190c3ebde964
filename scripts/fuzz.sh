#!/bin/sh
# Build the libFuzzer target of the probe report parser (fuzz/) with clang
# and run it for a bounded time:
#
#	sh scripts/fuzz.sh BUILD SECONDS
#
# The target goes to BUILD-fuzz/ (build-fuzz for the default build), new
# inputs to BUILD-fuzz/corpus, crashes to BUILD-fuzz/artifacts.  The seeds
# in fuzz/corpus/ are read, never written.  Exit 77, naming what is
# missing, when clang, libFuzzer or a library is not there; otherwise
# libFuzzer's status (0: nothing found).
set -eu

build=${1:-build}
secs=${2:-60}
top=$(cd "$(dirname "$0")/.." && pwd)
case "$build" in
/*) out=${build%/}-fuzz ;;
*) out=$top/${build%/}-fuzz ;;
esac
CLANG=${CLANG:-clang}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

case "$secs" in
''|*[!0-9]*) echo "fuzz: SECONDS must be a number, not '$secs'" >&2; exit 2 ;;
esac
if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "fuzz: $CLANG not found (Debian: clang)" >&2
	exit 77
fi
if ! libs=$($PKG_CONFIG --cflags --libs jansson libbsd-overlay 2>/dev/null)
then
	echo "fuzz: jansson or libbsd not found by $PKG_CONFIG" >&2
	exit 77
fi
mkdir -p "$out/corpus" "$out/artifacts"
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\n{ return 0; }\n' \
    > "$out/probe.c"
if ! "$CLANG" -fsanitize=fuzzer -o "$out/probe" "$out/probe.c" \
    >"$out/probe.log" 2>&1; then
	echo "fuzz: $CLANG cannot link -fsanitize=fuzzer (Debian: libclang-rt-14-dev)" >&2
	exit 77
fi

# shellcheck disable=SC2086
"$CLANG" -std=gnu11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -Wall -Wextra -Werror -Wno-unused-parameter \
    -I"$top/common" -I"$top/prober" \
    -o "$out/report_fuzz" "$top/fuzz/report_fuzz.c" "$top/prober/report.c" \
    "$top/prober/report_schema.c" "$top/prober/level.c" \
    "$top/common/names.c" $libs

echo "fuzz: running $out/report_fuzz for $secs s" >&2
exec "$out/report_fuzz" -max_total_time="$secs" -max_len=65536 \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -dict="$top/fuzz/report.dict" -artifact_prefix="$out/artifacts/" \
    "$out/corpus" "$top/fuzz/corpus"
