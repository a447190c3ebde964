#! /usr/bin/atf-sh
# bench/table.py, the one table of `make bench', on small canned
# records (docs/bench.md): the ratio of each row to its anchor (of the
# medians, or of the rates), what it says when the anchor is missing,
# skipped or failed rows, values that are not latencies, the warm
# pool's rows in a section of their own, the number formats, the
# Markdown table, the SVG plot, and refusal of malformed records.

. "$(atf_get_srcdir)/lib.subr"

T='	'

# row SECTION NAME ANCHOR BY UNIT N MEDIAN P99 RATE SAMPLES
row() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> rows.tsv
}

canned() {
	mkdir -p samples
	printf '1.9\n2.0\n2.1\n' > samples/boot.txt
	printf '3.9\n4.0\n4.4\n' > samples/bwrap.txt
	row boot "fenced L1.5 boot (fencectl)" "bwrap /bin/true (L1.5-like)" \
	    median ms 3 2.0 2.1 300 samples/boot.txt
	row boot "fenced L2 boot (fencectl)" "bwrap --unshare-net /bin/true" \
	    median ms 3 3.12 3.3 - -
	row boot "bwrap /bin/true (L1.5-like)" - median ms 3 4.0 4.4 250 \
	    samples/bwrap.txt
	row boot "bwrap --unshare-net /bin/true" - median ms 3 4.8 5.0 - -
	# The pool's rows come through bench_row() after L2's: whatever
	# anchor was current, they are measured against bwrap of their tier.
	row boot "fenced L1.5 pooled boot (fencectl)" \
	    "bwrap --unshare-net /bin/true" median ms 3 0.4 0.5 - -
	row boot "fenced L2 pooled boot (fencectl)" - median ms 3 0.96 1 - -
	row boot "runsc fence boot to agent ready" \
	    "runsc run /bin/true, same bundle" median ms 5 140.94 163.4 - -
	row boot "vm (tcg) fence boot to agent ready" \
	    "bwrap /bin/true (L1.5-like)" median ms 3 7176.4 7335 - -
	row exec "exec /bin/true, 8 clients" "fork+exec+wait /bin/true" \
	    rate ms 200 4.2 50 1500 -
	row exec "exec /bin/true, 64 clients" "fork+exec+wait /bin/true" \
	    rate ms 0 0 0 - -
	row exec "fork+exec+wait /bin/true" - median ms 200 0.5 0.7 1000 -
	row http "GET list | all, 1 conns" "bare evhttp, list body, 1 conns" \
	    rate ms 2000 0.0412 0.07 800 -
	row http "bare evhttp, list body, 1 conns" - rate ms 2000 0.035 0.06 \
	    1000 -
	row "idle memory" "PSS of one idle L1.5 fence" - median KiB 1 \
	    459 459 - -
	row density "PSS per idle fence, 256 up" "PSS of one idle L1.5 fence" \
	    median KiB 1 229.5 229.5 - -
	row density "fence cgroups left" - median count 1 0 0 - -
	row density "1000 fences up" - median skip 0 0 0 - \
	    "too-many-fences: at most 256 fences"
	row density "list, 256 up" "list, 1 up" median ms 20 0.3 0.4 - -
}

atf_test_case ratios
ratios_head() {
	atf_set descr "each row's ratio to its anchor, of the medians or of the rates; missing, failed and skipped rows said so"
}
ratios_body() {
	fenced_vars
	command -v python3 > /dev/null || atf_skip "no python3 (scripts/deps.sh installs it)"
	canned
	atf_check -o save:table.txt python3 "$TOPDIR/bench/table.py" \
	    --title "canned" rows.tsv
	cat table.txt
	has() {
		grep -F -- "$1" table.txt | grep -qF -- "$2" ||
		    atf_fail "no row '$1' with '$2'"
	}
	has "fenced L1.5 boot (fencectl)" "0.50x bwrap"
	has "fenced L2 boot (fencectl)" "0.65x bwrap --unshare-net"
	has "runsc fence boot to agent ready" "(no runsc run in this run)"
	has "vm (tcg) fence boot to agent ready" "1794.10x bwrap"
	has "exec /bin/true, 8 clients" "rate 1.50x fork+exec"
	has "exec /bin/true, 64 clients" "failed"
	has "GET list | all, 1 conns" "rate 0.80x bare evhttp"
	has "PSS per idle fence, 256 up" "0.50x PSS of one idle L1.5 fence"
	has "1000 fences up" "skipped: too-many-fences: at most 256 fences"
	has "list, 256 up" "(no list, 1 up in this run)"
	# The pool's rows: their section, against their tier's bwrap.
	has "fenced L1.5 pooled boot (fencectl)" "0.10x bwrap"
	has "fenced L2 pooled boot (fencectl)" "0.20x bwrap --unshare-net"
	atf_check_equal "canned" "$(head -1 table.txt)"
	atf_check_equal "boot pooled boot exec http idle memory density" \
	    "$(grep -v '^ ' table.txt | sed 1d | tr '\n' ' ' | sed 's/ $//')"
	atf_check_equal "  fenced L1.5 pooled boot (fencectl)" \
	    "$(sed -n '/^pooled boot$/{n;p;}' table.txt | sed 's/  *[0-9].*//')"
	# An anchor and a row with no anchor have no ratio at all.
	atf_check_equal "" "$(grep -F 'fork+exec+wait /bin/true ' table.txt |
	    grep 'x ')"
}

atf_test_case formats
formats_head() {
	atf_set descr "numbers, units, rates and the Markdown table as the README shows them"
}
formats_body() {
	fenced_vars
	command -v python3 > /dev/null || atf_skip "no python3 (scripts/deps.sh installs it)"
	canned
	atf_check -o save:table.txt python3 "$TOPDIR/bench/table.py" \
	    --markdown table.md rows.tsv
	# Cells are apart by two spaces at least, and hold single ones.
	line() { awk -v n="  $1" 'index($0, n) == 1' table.txt |
	    sed 's/  \+/|/g'; }
	atf_check_equal "|fenced L1.5 boot (fencectl)|3|2.000 ms|2.100 ms|300.0/s|0.50x bwrap" \
	    "$(line 'fenced L1.5 boot')"
	atf_check_equal "|runsc fence boot to agent ready|5|140.9 ms|163.4 ms|(no runsc run in this run)" \
	    "$(line 'runsc fence boot')"
	atf_check_equal "|vm (tcg) fence boot to agent ready|3|7176 ms|7335 ms|1794.10x bwrap" \
	    "$(line 'vm (tcg)')"
	atf_check_equal "|GET list | all, 1 conns|2000|0.041 ms|0.070 ms|800.0/s|rate 0.80x bare evhttp" \
	    "$(line 'GET list')"
	atf_check_equal "|PSS of one idle L1.5 fence|459.0 KiB" \
	    "$(line 'PSS of one idle')"
	atf_check_equal "|fence cgroups left|0" "$(line 'fence cgroups left')"
	# Markdown: one table, the bar in a name escaped, a row per record
	# and per section.
	atf_check_equal "| row | n | median | p99 | rate | ratio to anchor |" \
	    "$(head -1 table.md)"
	atf_check_equal '| GET list \| all, 1 conns | 2000 | 0.041 ms | 0.070 ms | 800.0/s | rate 0.80x bare evhttp |' \
	    "$(grep -F 'GET list' table.md)"
	atf_check_equal "$(($(wc -l < rows.tsv) + 6 + 2))" \
	    "$(wc -l < table.md | tr -d ' ')"
	# A row with an eleventh field, its 95th percentile: a p95 column
	# in both tables, empty for the rows without one.
	printf 'scale\tburst of 100 boots\t-\tmedian\tms\t100\t50.5\t98\t20\t-\t90.25\n' \
	    >> rows.tsv
	atf_check -o save:table.txt python3 "$TOPDIR/bench/table.py" \
	    --markdown table.md rows.tsv
	atf_check_equal "|n|median|p95|p99|rate|ratio to anchor" \
	    "$(sed -n 1p table.txt | sed 's/  \+/|/g')"
	atf_check_equal "|burst of 100 boots|100|50.500 ms|90.250 ms|98.000 ms|20.0/s" \
	    "$(line 'burst of 100')"
	# (its empty p95 cell is spaces: the Markdown below shows it)
	atf_check_equal "|fenced L1.5 boot (fencectl)|3|2.000 ms|2.100 ms|300.0/s|0.50x bwrap" \
	    "$(line 'fenced L1.5 boot')"
	atf_check_equal "| row | n | median | p95 | p99 | rate | ratio to anchor |" \
	    "$(head -1 table.md)"
	atf_check_equal "| burst of 100 boots | 100 | 50.500 ms | 90.250 ms | 98.000 ms | 20.0/s |  |" \
	    "$(grep -F 'burst of 100' table.md)"
	atf_check_equal "| fenced L1.5 boot (fencectl) | 3 | 2.000 ms |  | 2.100 ms | 300.0/s | 0.50x bwrap |" \
	    "$(grep -F 'fenced L1.5 boot (fencectl)' table.md)"
}

atf_test_case shell_rows
shell_rows_head() {
	atf_set descr "bench/rows.subr's records (bench_rows, bench_value_row, bench_rows_skip) as the table shows them: a value against a value of its unit, a row against the bwrap or floor measured beside it"
}
shell_rows_body() {
	fenced_vars
	command -v python3 > /dev/null || atf_skip "no python3 (scripts/deps.sh installs it)"
	BENCH_OUT=$(pwd)
	. "$TOPDIR/bench/rows.subr"
	printf '2000\n2100\n1900\n' > branch.us
	printf '4000\n4200\n3800\n' > bwrap.us
	printf '1000\n' > floor.us
	bench_rows snapshots "branch to first answer" \
	    "bwrap /bin/true (L1.5-like), beside the branches" median branch.us
	bench_rows snapshots "bwrap /bin/true (L1.5-like), beside the branches" \
	    "fork+exec /bin/true, beside the branches" median bwrap.us
	bench_rows snapshots "fork+exec /bin/true, beside the branches" "" \
	    median floor.us
	bench_value_row snapshots "the home's disk use (du)" "" MiB 101.6
	bench_value_row snapshots "a snapshot's disk use (du)" \
	    "the home's disk use (du)" MiB 50.8
	bench_value_row snapshots "target, 100 branches within 1 s: met" "" s \
	    0.500
	bench_rows_skip snapshots "runsc branch" "runsc is not installed"
	printf 'probe\tprobe, 5 runs\t-\tmedian\tms\t5\t1\t2\t-\t-\n' \
	    >> rows.tsv
	atf_check -o save:table.txt python3 "$TOPDIR/bench/table.py" \
	    --title "canned" rows.tsv
	cat table.txt
	line() { awk -v n="  $1" 'index($0, n) == 1' table.txt |
	    sed 's/  \+/|/g'; }
	atf_check_equal "|branch to first answer|3|2.000 ms|2.100 ms|0.50x bwrap" \
	    "$(line 'branch to first answer')"
	atf_check_equal "|bwrap /bin/true (L1.5-like), beside the branches|3|4.000 ms|4.200 ms|4.00x fork+exec" \
	    "$(line 'bwrap /bin/true')"
	atf_check_equal "|a snapshot's disk use (du)|50.800 MiB|0.50x the home's disk use (du)" \
	    "$(line "a snapshot's disk")"
	atf_check_equal "|target, 100 branches within 1 s: met|0.500 s" \
	    "$(line 'target, 100')"
	atf_check_equal "|runsc branch|skipped: runsc is not installed" \
	    "$(line 'runsc branch')"
	# The section after the known ones.
	atf_check_equal "probe snapshots" \
	    "$(grep -v '^ ' table.txt | sed 1d | tr '\n' ' ' | sed 's/ $//')"
}

atf_test_case plot
plot_head() {
	atf_set descr "the SVG: well-formed, one panel a section with samples, one line a row with samples, a log-scale axis"
}
plot_body() {
	fenced_vars
	command -v python3 > /dev/null || atf_skip "no python3 (scripts/deps.sh installs it)"
	canned
	atf_check -o ignore python3 "$TOPDIR/bench/table.py" --svg plot.svg \
	    rows.tsv
	atf_check -o inline:"polylines 2 panels 1 ticks 1,10\n" python3 -c '
import sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
r = E.parse(sys.argv[1]).getroot()
lines = r.findall(ns + "polyline")
panels = [t.text for t in r.findall(ns + "text") if "log scale" in t.text]
ticks = [t.text for t in r.findall(ns + "text")
         if t.get("text-anchor") == "middle"]
print("polylines %d panels %d ticks %s" % (len(lines), len(panels),
      ",".join(ticks)))' plot.svg
	# A sample file outside the records folder is not read.
	printf 'boot\tx\t-\tmedian\tms\t3\t1\t1\t-\t../../etc/passwd\n' > rows.tsv
	atf_check -o ignore python3 "$TOPDIR/bench/table.py" --svg plot.svg \
	    rows.tsv
	atf_check -s exit:1 grep -q polyline plot.svg
}

atf_test_case malformed
malformed_head() {
	atf_set descr "a record with the wrong fields, an unknown ratio or a negative number is refused, naming its line"
}
malformed_body() {
	fenced_vars
	command -v python3 > /dev/null || atf_skip "no python3 (scripts/deps.sh installs it)"
	canned
	cp rows.tsv good.tsv
	printf 'boot\tx\t-\tmedian\tms\t3\t1\t1\n' >> rows.tsv
	atf_check -s exit:1 -e match:"line 19: 8 fields, not 10 or 11" \
	    python3 "$TOPDIR/bench/table.py" rows.tsv
	cp good.tsv rows.tsv
	printf 'boot\tx\t-\tmean\tms\t3\t1\t1\t-\t-\n' >> rows.tsv
	atf_check -s exit:1 -e match:"line 19: by 'mean'" \
	    python3 "$TOPDIR/bench/table.py" rows.tsv
	cp good.tsv rows.tsv
	printf 'boot\tx\t-\tmedian\tms\t3\t-1\t1\t-\t-\n' >> rows.tsv
	atf_check -s exit:1 -e match:"line 19: a negative number" \
	    python3 "$TOPDIR/bench/table.py" rows.tsv
	cp good.tsv rows.tsv
	printf 'boot\tx\t-\tmedian\tms\tmany\t1\t1\t-\t-\n' >> rows.tsv
	atf_check -s exit:1 -e match:"rows.tsv: invalid literal" \
	    python3 "$TOPDIR/bench/table.py" rows.tsv
}

atf_init_test_cases() {
	atf_add_test_case ratios
	atf_add_test_case formats
	atf_add_test_case shell_rows
	atf_add_test_case plot
	atf_add_test_case malformed
}
