#!/bin/sh
# Run the regress suite with kyua and print one closing line:
#   N passed, N failed, N skipped
# Exit non-zero if anything failed or broke.  TESTS (for example
# "http_test exec_test:timeout") runs only those programs or cases.
set -u
build=$1; shift
[ "$(id -u)" -ne 0 ] || sh scripts/user.sh
db=$build/kyua-results.db
rm -f "$db"
kyua "$@" test --kyuafile regress/Kyuafile --build-root "$build/regress" \
    --results-file "$db" ${TESTS:-}
kyua report --results-file "$db" \
    --results-filter broken,failed,skipped --verbose >"$build/kyua-report.txt" \
    2>&1 || true
# Show what did not pass, with its reason.
grep -E '^===>|^Result:|skipped|failed|broken' "$build/kyua-report.txt" \
    | head -200 || true
kyua report --results-file "$db" --results-filter passed,skipped,xfail,broken,failed \
    >"$build/kyua-summary.txt" 2>&1 || true
# Where the time went (CI's budget is kept by it): the ten slowest cases
# and the programs' sums of their cases' times.
kyua report-junit --results-file "$db" 2>/dev/null | sed -n \
    's/.*<testcase classname="\([^"]*\)" name="\([^"]*\)" time="\([0-9.]*\)".*/\3 \1:\2/p' \
    >"$build/kyua-times.txt" || true
sort -rn "$build/kyua-times.txt" | head -10 | awk '{ printf "slowest: %7.1f s  %s\n", $1, $2 }'
sed 's/:[^:]*$//' "$build/kyua-times.txt" | awk '{ t[$2] += $1 } END {
    for (p in t) printf "%.1f %s\n", t[p], p }' | sort -rn | head -12 |
    awk '{ printf "program: %7.1f s  %s\n", $1, $2 }'
summary=$(grep -E '^Test cases:' "$build/kyua-summary.txt" | tail -1)
echo "$summary"
total=$(echo "$summary" | sed -n 's/.*Test cases: \([0-9]*\) total.*/\1/p')
skipped=$(echo "$summary" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
xfail=$(echo "$summary" | sed -n 's/.* \([0-9]*\) expected failures.*/\1/p')
broken=$(echo "$summary" | sed -n 's/.* \([0-9]*\) broken.*/\1/p')
failed=$(echo "$summary" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
if [ -z "$total" ]; then
	echo "0 passed, 1 failed"
	exit 1
fi
bad=$((${broken:-0} + ${failed:-0}))
passed=$((total - ${skipped:-0} - bad))
echo "$passed passed, $bad failed, ${skipped:-0} skipped"
[ "$bad" -eq 0 ] && [ "$total" -gt 0 ]
