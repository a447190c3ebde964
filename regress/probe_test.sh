#! /usr/bin/atf-sh
# fence-probe run on the host and in real fences; its report parsed and
# judged by report_parse() through regress/t_probe_parse (docs/probe.md).
#
# No packet leaves the machine: every TCP target and the canary are
# listeners of regress/t_probe_canary on 127.0.0.1, DNS is asked for
# "localhost" (in /etc/hosts), and the one DNS test that needs a server
# binds a resolv.conf naming 127.0.0.1 over the host's in a mount
# namespace of its own, with a silent UDP socket there.  The default
# targets (1.1.1.1, example.com) are used only in an empty network
# namespace, where nothing can leave.
#
# By hand: atf-sh regress/probe_test.sh -v regressdir=$PWD/build/regress
#     -v bindir=$PWD/build/bin

# A uid and gid nobody else's (the tests count its processes), also not
# another suite's running beside this one: derived from the test case's
# work directory, which kyua makes unique, so body and cleanup agree.
FENCE_UID=$((200000 + $(pwd | cksum | cut -d' ' -f1) % 700000))
FENCE_GID=$FENCE_UID

probe_setup() {
	REGRESS=$(atf_config_get regressdir "$(atf_get_srcdir)")
	BIN=$(atf_config_get bindir "$(dirname "$REGRESS")/bin")
	PROBE=$BIN/fence-probe
	PARSE=$REGRESS/t_probe_parse
	CANARY=$REGRESS/t_probe_canary
	PROXY=$REGRESS/t_egress_proxy
	for f in "$PROBE" "$PARSE" "$CANARY" "$PROXY"; do
		[ -x "$f" ] || atf_skip "$f not built"
	done
}

# probe_run OUT [probe args]: run the probe under t_probe_canary; its
# report in OUT, the host's view in host (accepted, port, elapsed).
probe_run() {
	out=$1
	shift
	"$CANARY" -o host -- "$PROBE" "$@" > "$out" 2> probe.err
	echo $? > rc
}

host_get() {
	sed -n "s/^$1 //p" host
}

# The report's value at a path.
get() {
	"$PARSE" -g "$2" < "$1"
}

check_get() {
	v=$(get "$1" "$2")
	[ "$v" = "$3" ] || { show "$1"; atf_fail "$2 is '$v', not '$3'"; }
}

# check_listed FILE ARRAY VALUE: VALUE is one of the elements of ARRAY, of
# which the probe reports at most 4 (docs/probe.md), in the resolver's
# order: "localhost" is 127.0.0.1 first or ::1 first, as /etc/hosts says.
check_listed() {
	for i in 0 1 2 3; do
		[ "$(get "$1" "$2.$i")" != "$3" ] || return 0
	done
	show "$1"
	atf_fail "$2 does not list '$3'"
}

show() {
	echo "--- $1" >&2
	cat "$1" >&2
	echo "--- stderr" >&2
	cat probe.err >&2 2>/dev/null
}

# The verdicts of t_probe_parse: must be well-formed, then grep them.
judge() {
	out=$1
	shift
	"$PARSE" "$@" < "$out" > verdict || { cat verdict >&2; show "$out";
	    atf_fail "the report did not parse"; }
}

expect_verdict() {
	grep -Fqx -- "$1" verdict || { cat verdict >&2;
	    atf_fail "no \"$1\" in the verdict"; }
}

elapsed_below() {
	ms=$(host_get elapsed)
	[ -n "$ms" ] && [ "$ms" -lt "$1" ] ||
	    atf_fail "the probe took ${ms:-?} ms, not under $1 ms"
}

atf_test_case host_root
host_root_head() {
	atf_set descr "as root on the host the probe reports the host's truths: /usr writable, the host pid visible, no filter; well-formed, not earned"
	atf_set require.user root
}
host_root_body() {
	probe_setup
	probe_run report --dns localhost --tcp 127.0.0.1:@CLOSED@ \
	    --host-pid $$ --host-secret /etc/passwd
	atf_check_equal "$(cat rc)" 0
	judge report -H -p $$ -s /etc/passwd
	expect_verdict "level: not-earned"
	expect_verdict "violation: filesystem: /usr writable"
	expect_verdict "violation: filesystem: host secret /etc/passwd readable"
	expect_verdict "violation: processes: host pid $$ visible"
	expect_verdict "violation: privileges: Seccomp is 0"
	expect_verdict "kernel: shared"
	check_get report probe sandbox-probe/1
	check_get report identity.uid 0
	check_get report processes.hostPid.visible true
	check_get report sandboxHints.namespaces.pid.differs null
	check_get report privileges.keyctl ok
	size=$(wc -c < report)
	[ "$size" -lt 65536 ] || atf_fail "report of $size bytes"
}

atf_test_case host_nobody
host_nobody_head() {
	atf_set descr "as nobody on the host: /usr refused with EACCES (not EROFS), HOME writable, other users' processes visible, the namespaces compared"
	atf_set require.user root
}
host_nobody_body() {
	probe_setup
	mkdir home
	chown 65534 home
	chmod 0755 "$PWD"
	hns="pid=$(stat -Lc %i /proc/self/ns/pid),net=$(stat -Lc %i /proc/self/ns/net)"
	HOME=$PWD/home setpriv --reuid=65534 --regid=65534 --clear-groups \
	    "$PROBE" --dns localhost --tcp 127.0.0.1:9 --host-ns "$hns" \
	    > report 2> probe.err || atf_fail "probe failed: $(cat probe.err)"
	judge report -H -n "$hns"
	expect_verdict "level: not-earned"
	expect_verdict "violation: filesystem: /usr not read-only (EACCES)"
	expect_verdict "violation: processes: pid namespace is the host's"
	grep -q "^violation: processes: processes of other uids visible" \
	    verdict || atf_fail "other users' processes not seen"
	grep -q "^violation: filesystem: HOME" verdict &&
	    atf_fail "HOME not writable for its owner"
	check_get report identity.uid 65534
	check_get report filesystem.paths.1.error EACCES
	check_get report filesystem.paths.7.path "$PWD/home"
	check_get report filesystem.paths.7.writable true
	check_get report sandboxHints.namespaces.pid.differs false
	check_get report sandboxHints.capEff 0000000000000000
	check_get report processes.otherUids true
}

atf_test_case network_fast
network_fast_head() {
	atf_set descr "a refused port, an open listener and the canary, all on 127.0.0.1: answered well under a second, the canary connect seen by both sides"
}
network_fast_body() {
	probe_setup
	probe_run report --dns localhost --tcp 127.0.0.1:@CLOSED@ \
	    --tcp 127.0.0.1:@OPEN@ --canary 127.0.0.1:@PORT@
	atf_check_equal "$(cat rc)" 0
	elapsed_below 1000
	check_get report network.dns.resolved true
	check_listed report network.dns.addresses 127.0.0.1
	check_get report network.tcp.0.connected false
	check_get report network.tcp.0.error ECONNREFUSED
	check_get report network.tcp.1.connected true
	check_get report network.tcp.1.error null
	check_get report network.canary.target "127.0.0.1:$(host_get port)"
	check_get report network.canary.connected true
	atf_check_equal "$(host_get accepted)" 1
	check_get report network.interfaces.0.name lo
}

atf_test_case no_outbound
no_outbound_head() {
	atf_set descr "--no-outbound: no DNS and no targets, only the canary and the interfaces"
}
no_outbound_body() {
	probe_setup
	probe_run report --no-outbound --tcp 127.0.0.1:@OPEN@ \
	    --canary 127.0.0.1:@PORT@
	atf_check_equal "$(cat rc)" 0
	check_get report network.dns null
	check_get report network.tcp "[]"
	check_get report network.canary.connected true
	atf_check_equal "$(host_get accepted)" 1
	judge report -H
	expect_verdict "network: passes"
}

atf_test_case network_drop_bounded
network_drop_bounded_head() {
	atf_set descr "a target that drops SYNs (a full listen queue on 127.0.0.1) times out at the connect bound, not later"
}
network_drop_bounded_body() {
	probe_setup
	probe_run report --dns localhost --tcp 127.0.0.1:@DROP@ \
	    --tcp 127.0.0.1:@CLOSED@
	atf_check_equal "$(cat rc)" 0
	check_get report network.tcp.0.error timeout
	check_get report network.tcp.1.error ECONNREFUSED
	ms=$(get report network.tcp.0.ms)
	[ "$ms" -ge 1400 ] && [ "$ms" -le 1700 ] ||
	    atf_fail "the dropped connect ended after $ms ms, not 1500"
	elapsed_below 2500
}

atf_test_case dns_bounded
dns_bounded_head() {
	atf_set descr "a resolver that never answers (on 127.0.0.1, in a mount namespace of the test) is given up after 4 s, for every name at once: the DNS one, eight targets' and the canary's"
	atf_set require.user root
}
dns_bounded_body() {
	probe_setup
	echo "nameserver 127.0.0.1" > resolv.conf
	names=""
	for i in 1 2 3 4 5 6 7; do
		names="$names --tcp t$i.sandbox-probe.invalid:80"
	done
	unshare -m sh -c "mount --bind $PWD/resolv.conf /etc/resolv.conf &&
	    exec $CANARY -u -o host -- $PROBE --dns sandbox-probe.invalid \
	    $names --tcp 127.0.0.1:@CLOSED@ \
	    --canary canary.sandbox-probe.invalid:@PORT@" > report 2> probe.err
	rc=$?
	[ $rc -ne 3 ] || atf_skip "UDP 127.0.0.1:53 is taken: $(cat probe.err)"
	[ $rc -eq 0 ] || { show report; atf_fail "exit $rc"; }
	check_get report network.dns.error timeout
	check_get report network.tcp.0.error timeout
	check_get report network.tcp.0.address null
	check_get report network.tcp.6.target t7.sandbox-probe.invalid:80
	check_get report network.tcp.6.error timeout
	check_get report network.tcp.7.error ECONNREFUSED
	check_get report network.canary.error timeout
	ms=$(get report network.dns.ms)
	[ "$ms" -ge 3900 ] && [ "$ms" -le 4300 ] ||
	    atf_fail "DNS given up after $ms ms, not 4000"
	elapsed_below 5000
}

# egress_run MODE OUT [probe args]: the probe's egress checks against
# t_egress_proxy in MODE (regress/t_egress_proxy.c), which lets
# ok.example:443 through; the requests it read in requests, the time
# the probe took in host.
egress_run() {
	mode=$1
	out=$2
	shift 2
	t0=$(date +%s%N)
	"$PROXY" -m "$mode" -a ok.example:443 -o requests -- "$PROBE" \
	    --no-outbound --egress-proxy 127.0.0.1:@PROXY@ "$@" > "$out" \
	    2> probe.err
	echo $? > rc
	echo "elapsed $((($(date +%s%N) - t0) / 1000000))" > host
}

atf_test_case egress_answers
egress_answers_head() {
	atf_set descr "the egress checks through a stand-in proxy on 127.0.0.1: CONNECT with its Host header; 200 is reached, 403 with its X-Fenced-Egress code is not; a port with no proxy is refused"
}
egress_answers_body() {
	probe_setup
	egress_run list report --egress-allowed ok.example:443 \
	    --egress-refused no.example:443
	atf_check_equal "$(cat rc)" 0
	elapsed_below 1000
	case "$(get report network.egress.proxy)" in
	127.0.0.1:[1-9]*) ;;
	*) show report; atf_fail "the proxy is not the one given" ;;
	esac
	check_get report network.egress.allowed.target ok.example:443
	check_get report network.egress.allowed.proxy true
	check_get report network.egress.allowed.status 200
	check_get report network.egress.allowed.code ""
	check_get report network.egress.allowed.reached true
	check_get report network.egress.allowed.error null
	check_get report network.egress.refused.target no.example:443
	check_get report network.egress.refused.proxy true
	check_get report network.egress.refused.status 403
	check_get report network.egress.refused.code not-listed
	check_get report network.egress.refused.reached false
	check_get report network.egress.refused.error null
	# Each request as the proxy read it, and nothing else.
	cr=$(printf '\r')
	for t in ok.example:443 no.example:443; do
		for l in "CONNECT $t HTTP/1.1" "Host: $t"; do
			[ "$(grep -Fxc "$l$cr" requests)" = 1 ] ||
			    { cat -A requests >&2; atf_fail "no \"$l\" read"; }
		done
	done
	[ "$(grep -Fxc "$cr" requests)" = 2 ] &&
	    [ "$(wc -c < requests)" -eq 114 ] ||
	    { cat -A requests >&2; atf_fail "the requests are not as sent"; }

	# One target only: the other is null.
	egress_run list report --egress-refused no.example:443
	atf_check_equal "$(cat rc)" 0
	check_get report network.egress.allowed null
	check_get report network.egress.refused.status 403

	# No proxy listens: refused, not reached.
	"$PROXY" -- "$PROBE" --no-outbound --egress-proxy \
	    127.0.0.1:@NOPROXY@ --egress-allowed ok.example:443 > report
	check_get report network.egress.allowed.proxy false
	check_get report network.egress.allowed.status 0
	check_get report network.egress.allowed.reached false
	check_get report network.egress.allowed.error ECONNREFUSED

	# Without --egress-proxy, no egress object.
	probe_run report --no-outbound
	check_get report network.egress missing
}

atf_test_case egress_bad_proxies
egress_bad_proxies_head() {
	atf_set descr "a proxy that never answers is given up at the egress bound (2 s), one that closes, sends garbage, a NUL, a head over 1024 bytes or a code that is no word is recorded as such: never reached, the probe never hangs"
}
egress_bad_proxies_body() {
	probe_setup
	egress_run silent report --egress-allowed ok.example:443 \
	    --egress-refused no.example:443
	atf_check_equal "$(cat rc)" 0
	elapsed_below 3000
	for t in allowed refused; do
		check_get report network.egress.$t.proxy true
		check_get report network.egress.$t.status 0
		check_get report network.egress.$t.reached false
		check_get report network.egress.$t.error timeout
		ms=$(get report network.egress.$t.ms)
		[ "$ms" -ge 1900 ] && [ "$ms" -le 2300 ] ||
		    atf_fail "the silent proxy was given up after $ms ms"
	done
	# A proxy that closes at once: the end seen, or the reset of a
	# request sent after it.
	for m in close:closed,ECONNRESET,EPIPE garbage:malformed \
	    binary:malformed long:malformed; do
		egress_run "${m%%:*}" report --egress-allowed ok.example:443 \
		    --egress-refused no.example:443
		atf_check_equal "$(cat rc)" 0
		elapsed_below 1000
		for t in allowed refused; do
			check_get report network.egress.$t.status 0
			check_get report network.egress.$t.reached false
			e=$(get report network.egress.$t.error)
			case ",${m#*:}," in
			*",$e,"*) ;;
			*) show report; atf_fail "${m%%:*}: error $e" ;;
			esac
		done
	done
	egress_run header report --egress-refused no.example:443
	check_get report network.egress.refused.status 403
	check_get report network.egress.refused.code ""
	check_get report network.egress.refused.error null
}

atf_test_case egress_judged
egress_judged_head() {
	atf_set descr "in an empty network namespace with its own lo, as a fence with an egress list has: the stand-in proxy refusing the target off the list makes the network allowlisted; letting it through is a violation; the same report without a list is fenced"
	atf_set require.user root
}
egress_judged_body() {
	probe_setup
	command -v ip > /dev/null || atf_skip "no ip (iproute2)"
	# The canary a closed port: tried, not reached.
	for a in no.example:443 ok.example:443; do
		unshare -n sh -c 'ip link set lo up && exec "$@"' sh \
		    "$PROXY" -m list -a "$a" -- "$PROBE" --no-outbound \
		    --canary 127.0.0.1:@NOPROXY@ \
		    --egress-proxy 127.0.0.1:@PROXY@ \
		    --egress-allowed ok.example:443 \
		    --egress-refused no.example:443 > "report.${a%%.*}" \
		    2> probe.err || { show "report.${a%%.*}";
		    atf_fail "the probe failed"; }
	done
	canary=$(get report.ok network.canary.target)
	set -- -A L2 -t L2 -c no -C "$canary" -e '*.cdn.example.com:443' \
	    -e ok.example:443 -a ok.example:443 -r no.example:443
	judge report.ok "$@" -j
	expect_verdict "network: allowlisted"
	grep -q '"egress":{"list":\["\*.cdn.example.com:443","ok.example:443"\]' \
	    verdict || { cat verdict >&2; atf_fail "no egress in the boundary"; }
	canary=$(get report.no network.canary.target)
	set -- -A L2 -t L2 -c no -C "$canary" -e '*.cdn.example.com:443' \
	    -e ok.example:443 -a ok.example:443 -r no.example:443
	judge report.no "$@"
	expect_verdict "network: not-fenced"
	expect_verdict "violation: network: no.example:443, not in the list, reached through the proxy"
	# Without a list the egress object is not the host's business.
	judge report.no -A L2 -t L2 -c no -C "$canary"
	expect_verdict "network: fenced"
	# A list, and a report of other targets.
	judge report.ok -A L2 -t L2 -c no -C "$(get report.ok \
	    network.canary.target)" -e ok.example:443 -a ok.example:443 \
	    -r other.example:443
	expect_verdict "network: not measured"
}

atf_test_case egress_usage
egress_usage_head() {
	atf_set descr "the egress options are checked: a literal proxy address, targets NAME:PORT in lower case, each once, and only with a proxy"
}
egress_usage_body() {
	probe_setup
	long=$(printf '%0254d' 0 | tr 0 a)
	for a in "--egress-allowed ok.example:443" \
	    "--egress-refused ok.example:443" \
	    "--egress-proxy localhost:3128" "--egress-proxy 127.0.0.1" \
	    "--egress-proxy 127.0.0.1:0" \
	    "--egress-proxy 127.0.0.1:1 --egress-proxy 127.0.0.1:2" \
	    "--egress-proxy 127.0.0.1:1 --egress-allowed OK.example:443" \
	    "--egress-proxy 127.0.0.1:1 --egress-allowed *.example.com:443" \
	    "--egress-proxy 127.0.0.1:1 --egress-allowed ok.example" \
	    "--egress-proxy 127.0.0.1:1 --egress-allowed ok.example:0443" \
	    "--egress-proxy 127.0.0.1:1 --egress-allowed ok.example:65536" \
	    "--egress-proxy 127.0.0.1:1 --egress-allowed :443" \
	    "--egress-proxy 127.0.0.1:1 --egress-allowed 10.0.0.1:443" \
	    "--egress-proxy 127.0.0.1:1 --egress-allowed $long:443" \
	    "--egress-proxy 127.0.0.1:1 --egress-refused a:1 --egress-refused b:1"
	do
		# shellcheck disable=SC2086
		atf_check -s exit:64 -o empty -e match:usage "$PROBE" $a
	done
	atf_check -s exit:64 -o empty -e match:usage "$PROBE" \
	    --egress-proxy 127.0.0.1:1 --egress-allowed "$(printf 'a\r\nX: y:1')"
	atf_check -s exit:64 -o empty -e match:usage "$PROBE" \
	    --egress-proxy 127.0.0.1:1 --egress-allowed "a b:1"
}

atf_test_case no_network_fast
no_network_fast_head() {
	atf_set descr "with no network at all (an empty network namespace) the default targets fail at once: the section ends well under a second"
	atf_set require.user root
}
no_network_fast_body() {
	probe_setup
	# No listener can be opened in there: time the probe by itself.
	t0=$(date +%s%N)
	unshare -n "$PROBE" > report 2> probe.err ||
	    atf_fail "probe failed: $(cat probe.err)"
	echo "elapsed $((($(date +%s%N) - t0) / 1000000))" > host
	elapsed_below 1000
	check_get report network.tcp.0.target 1.1.1.1:443
	check_get report network.tcp.0.error ENETUNREACH
	check_get report network.tcp.1.target example.com:80
	check_get report network.tcp.1.address null
	check_get report network.dns.name example.com
	check_get report network.dns.resolved false
	check_get report network.interfaces.0.name lo
	check_get report network.interfaces.1 missing
	ms=$(get report network.ms)
	[ "$ms" -lt 500 ] || atf_fail "the network section took $ms ms"
}

atf_test_case markers_cleaned
markers_cleaned_head() {
	atf_set descr "markers of interrupted probes older than a minute are removed at start, fresh ones and non-files kept, the probe's own leaves none"
}
markers_cleaned_body() {
	probe_setup
	mkdir home
	touch -d '-2 minutes' home/.sandbox-probe-1-old
	touch home/.sandbox-probe-2-fresh
	ln -s /etc/passwd home/.sandbox-probe-3-link
	touch -h -d '-2 minutes' home/.sandbox-probe-3-link
	mkdir home/.sandbox-probe-4-dir
	touch -d '-2 minutes' home/.sandbox-probe-4-dir
	HOME=$PWD/home "$PROBE" --dns localhost --tcp 127.0.0.1:9 \
	    > report 2> probe.err || atf_fail "probe failed"
	[ ! -e home/.sandbox-probe-1-old ] || atf_fail "old marker kept"
	[ -e home/.sandbox-probe-2-fresh ] || atf_fail "fresh marker removed"
	[ -L home/.sandbox-probe-3-link ] || atf_fail "symlink removed"
	[ -d home/.sandbox-probe-4-dir ] || atf_fail "directory removed"
	atf_check -o inline:"3\n" sh -c "ls -A home | wc -l"
	check_get report filesystem.markersRemoved 1
	check_get report filesystem.paths.7.writable true
	check_get report filesystem.paths.7.markerLeft missing
}

atf_test_case escaping
escaping_head() {
	atf_set descr "a HOME with quotes, a newline, a tab and an invalid UTF-8 byte still gives a report that parses; the output is bounded"
}
escaping_body() {
	probe_setup
	name=$(printf 'h"o\\m\te\n\377x')
	mkdir "$name"
	HOME=$PWD/$name "$PROBE" --dns localhost --tcp 127.0.0.1:9 \
	    --host-secret "/nonexistent/\"x" > report 2> probe.err ||
	    atf_fail "probe failed"
	judge report -H
	expect_verdict "level: not-earned"
	home=$(get report filesystem.home)
	case "$home" in
	*'h"o\m'*) ;;
	*) atf_fail "HOME came out as '$home'" ;;
	esac
	check_get report filesystem.hostPaths.0.path '/nonexistent/"x'
	check_get report filesystem.hostPaths.0.error ENOENT
}

atf_test_case usage
usage_head() {
	atf_set descr "bad arguments are refused before anything is measured or printed"
}
usage_body() {
	probe_setup
	for a in "--tcp 127.0.0.1" "--tcp 127.0.0.1:0" "--tcp :80" \
	    "--tcp 127.0.0.1:65536" "--host-ns pid=x" "--host-ns bogus=1" \
	    "--host-pid -1" "--host-secret relative" "--deadline soon" \
	    "--dns" "extra"; do
		# shellcheck disable=SC2086
		atf_check -s exit:64 -o empty -e match:usage "$PROBE" $a
	done
	i=0
	set --
	while [ $i -lt 9 ]; do
		set -- "$@" --tcp 127.0.0.1:9
		i=$((i + 1))
	done
	atf_check -s exit:64 -o empty -e match:usage "$PROBE" "$@"
}

atf_test_case static_minimal_root
static_minimal_root_head() {
	atf_set descr "the probe needs nothing from the filesystem: in an empty root with only /etc/hosts it reports, resolves localhost and lists interfaces"
	atf_set require.user root
}
static_minimal_root_body() {
	probe_setup
	if readelf -l "$PROBE" 2>/dev/null | grep -q INTERP; then
		atf_skip "fence-probe is dynamically linked (a sanitizer build)"
	fi
	mkdir -p root/etc
	cp "$PROBE" root/fence-probe
	echo "127.0.0.1 localhost" > root/etc/hosts
	chroot root /fence-probe --dns localhost --tcp 127.0.0.1:9 \
	    > report 2> probe.err || atf_fail "probe failed: $(cat probe.err)"
	judge report -H
	check_get report network.dns.addresses.0 127.0.0.1
	check_get report network.interfaces.0.name lo
	check_get report identity.bootId null
	check_get report tools.found.sh null
}

# --- In real fences, booted by regress/t_fence.

fence_setup() {
	probe_setup
	T_FENCE=$REGRESS/t_fence
	T_INIT=$REGRESS/t_probe_init
	[ -x "$T_FENCE" ] && [ -x "$T_INIT" ] ||
	    atf_skip "t_fence and t_probe_init not built in $REGRESS"
	# The cgroup parent is this case's own (fence_test says why).
	[ -s cgname ] || echo "probe-regress-$$" > cgname
	CG=$(cat cgname)
	out=$("$T_FENCE" -C "$CG" -Q) ||
	    atf_skip "${out:-t_fence -Q failed}"
	if [ ! -s work.path ]; then
		mktemp -d /var/lib/probe-regress.XXXXXX > work.path ||
		    atf_fail "cannot create a work directory under /var/lib"
	fi
	WORK=$(cat work.path)
	mkdir -p "$WORK/bin" "$WORK/homes"
	chmod 0755 "$WORK" "$WORK/bin" "$WORK/homes"
	cp "$PROBE" "$T_INIT" "$WORK/bin/"
	# Readable by anyone: only the fence's mounts may hide it.
	echo secret > "$WORK/secret"
	chmod 0644 "$WORK/secret"
	KEY=pt-$1-$$
	echo "$KEY" > key
	HOST_NS="pid=$(stat -Lc %i /proc/self/ns/pid),net=$(stat -Lc %i /proc/self/ns/net),mnt=$(stat -Lc %i /proc/self/ns/mnt)"
}

# fence_probe TIER: boot a fence of the tier whose pid 1 runs the probe,
# judge its report as the fencer would.
fence_probe() {
	"$CANARY" -o host -- "$T_FENCE" -C "$CG" -t "$1" \
	    -u $FENCE_UID -g $FENCE_GID -k "$KEY" -b "$WORK/bin" \
	    -H "$WORK/homes" -- t_probe_init /home/fence/probe.json \
	    --dns localhost --tcp 127.0.0.1:@CLOSED@ --tcp 127.0.0.1:@OPEN@ \
	    --canary 127.0.0.1:@PORT@ --host-pid $$ \
	    --host-secret "$WORK/secret" --host-ns "$HOST_NS" \
	    > out 2> probe.err
	echo $? > rc
	grep -q '^clean: ' out || { cat out probe.err >&2;
	    atf_fail "the fence did not boot or stop cleanly"; }
	grep -q '^probe: exit 0$' out || { cat out >&2;
	    atf_fail "the probe failed in the fence"; }
	cp "$WORK/homes/$KEY/probe.json" report
	if [ "$(host_get accepted)" -gt 0 ]; then c=yes; else c=no; fi
	# The host's reading of pid 1 is the daemon's (levels_test,
	# forge_test); here the report alone is judged against it.
	judge report -H -A "$1" -t "$1" -c $c -C "127.0.0.1:$(host_get port)" \
	    -s "$WORK/secret" -p $$ -n "$HOST_NS"
}

fence_cleanup() {
	REGRESS=$(atf_config_get regressdir "$(atf_get_srcdir)")
	cg=$(cat cgname 2>/dev/null)
	cg=${cg:-probe-regress-none}
	for k in $(cat key 2>/dev/null); do
		for d in $("$REGRESS/t_fence" -C "$cg" -P 2>/dev/null); do
			rmdir "$d/$k" 2>/dev/null
		done
	done
	for d in $("$REGRESS/t_fence" -C "$cg" -P 2>/dev/null); do
		rmdir "$d" 2>/dev/null
	done
	w=$(cat work.path 2>/dev/null)
	case "$w" in
	/var/lib/probe-regress.*) rm -rf "$w" ;;
	esac
	true
}

atf_test_case fence_l1 cleanup
fence_l1_head() {
	atf_set descr "an L1 fence earns L1: filesystem and processes fenced, no filter (its calls reach the kernel), the network shared"
	atf_set require.user root
}
fence_l1_body() {
	fence_setup l1
	fence_probe L1
	expect_verdict "level: L1"
	expect_verdict "filesystem: fenced"
	expect_verdict "processes: fenced"
	expect_verdict "privileges: not-fenced"
	expect_verdict "violation: privileges: Seccomp is 0"
	expect_verdict "network: passes"
	expect_verdict "kernel: shared"
	check_get report filesystem.hostPaths.0.readable false
	check_get report processes.hostPid.visible false
	check_get report sandboxHints.namespaces.pid.differs true
	check_get report sandboxHints.namespaces.net.differs false
	surface_listed
}
fence_l1_cleanup() { fence_cleanup; }

# surface_listed: an L1 fence's surface (docs/probe.md, "The kernel
# surface"): what the report reached is what the boundary lists, with
# no violation (reachable by design); the entries the privileges
# section tries are the same calls, so they agree; io_uring, where this
# kernel allows it to all, is reached.
surface_listed() {
	grep -q '^violation: surface:' verdict && { cat verdict >&2;
	    atf_fail "an L1 fence's surface holds violations"; }
	judge report -H -A L1 -t L1 -c yes -s "$WORK/secret" -p $$ \
	    -n "$HOST_NS" -j
	json=$(sed -n 's/^json: //p' verdict)
	for id in af_alg io_uring nf_tables rds vsock esp rxrpc keyctl bpf \
	    perf_event userfaultfd userns ptrace; do
		v=$(get report "surface.$id")
		[ -n "$v" ] && [ "$v" != missing ] ||
		    atf_fail "surface.$id not in the report"
		if [ "$v" = ok ]; then
			echo "$json" | grep -q "\"reachable\":\[[^]]*\"$id\"" ||
			    atf_fail "$id reached, not listed: $json"
		fi
	done
	check_get report surface.io_uring "$(get report privileges.io_uring_setup)"
	check_get report surface.userns "$(get report privileges.unshare_user)"
	check_get report surface.keyctl "$(get report privileges.keyctl)"
	if [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null)" = 0 ]; then
		check_get report surface.io_uring ok
		expect_verdict "surface: passes"
	fi
	echo "$json" | grep -q '"surface":{"verdict":"[a-z]*","violations":\[\],"reason":null,"reachable":\[[^]]*\],"kernel":"host"}' ||
	    atf_fail "no surface axis of the host's kernel: $json"
}

# surface_none: every entry refused by the fence's own filter (EPERM).
surface_none() {
	expect_verdict "surface: fenced"
	for id in af_alg io_uring nf_tables rds vsock esp rxrpc keyctl bpf \
	    perf_event userfaultfd userns ptrace; do
		check_get report "surface.$id" EPERM
	done
}

atf_test_case fence_l15 cleanup
fence_l15_head() {
	atf_set descr "an L1.5 fence earns L1.5: its own filter refuses unshare, keyctl and bpf; Seccomp 2, no capabilities; the canary reached (shared network passes)"
	atf_set require.user root
}
fence_l15_body() {
	fence_setup l15
	fence_probe L1.5
	expect_verdict "level: L1.5"
	expect_verdict "privileges: fenced"
	expect_verdict "network: passes"
	check_get report privileges.keyctl EPERM
	check_get report privileges.unshare_user EPERM
	check_get report sandboxHints.seccomp 2
	check_get report sandboxHints.noNewPrivs 1
	check_get report sandboxHints.landlock.restricted true
	check_get report network.canary.connected true
	atf_check_equal "$(host_get accepted)" 1
	surface_none
}
fence_l15_cleanup() { fence_cleanup; }

atf_test_case fence_l2 cleanup
fence_l2_head() {
	atf_set descr "an L2 fence earns L2: only lo, the canary on the host's 127.0.0.1 unreachable by both accounts"
	atf_set require.user root
}
fence_l2_body() {
	fence_setup l2
	fence_probe L2
	expect_verdict "level: L2"
	expect_verdict "network: fenced"
	check_get report network.canary.connected false
	check_get report network.interfaces.0.name lo
	check_get report network.interfaces.1 missing
	check_get report sandboxHints.namespaces.net.differs true
	atf_check_equal "$(host_get accepted)" 0
	surface_none
	# The same report judged as an L1.5 fence that should share the
	# network: measured, it has none, so it still earns L2.
	judge report -H -A L2 -t L1.5 -c no -s "$WORK/secret" -p $$ -n "$HOST_NS"
	expect_verdict "level: L2"
}
fence_l2_cleanup() { fence_cleanup; }

atf_test_case prober_names_no_backend
prober_names_no_backend_head() {
	atf_set descr "nothing in prober/ names a backend: the judge knows a fence by the traits its backend's entry declares (docs/probe.md)"
}
prober_names_no_backend_body() {
	TOPDIR=$(atf_config_get topdir "")
	[ -n "$TOPDIR" ] && [ -d "$TOPDIR/prober" ] ||
	    atf_skip "no source tree (-v topdir=...)"
	found=$( (grep -il 'runsc\|qemu' "$TOPDIR"/prober/*.[ch]
	    grep -l 'BACKEND_[A-Z]' "$TOPDIR"/prober/*.[ch]) | sort -u)
	[ -z "$found" ] || atf_fail "prober/ names a backend in: $found"
}

atf_init_test_cases() {
	atf_add_test_case prober_names_no_backend
	atf_add_test_case host_root
	atf_add_test_case host_nobody
	atf_add_test_case network_fast
	atf_add_test_case no_outbound
	atf_add_test_case network_drop_bounded
	atf_add_test_case dns_bounded
	atf_add_test_case no_network_fast
	atf_add_test_case egress_answers
	atf_add_test_case egress_bad_proxies
	atf_add_test_case egress_usage
	atf_add_test_case egress_judged
	atf_add_test_case markers_cleaned
	atf_add_test_case escaping
	atf_add_test_case usage
	atf_add_test_case static_minimal_root
	atf_add_test_case fence_l1
	atf_add_test_case fence_l15
	atf_add_test_case fence_l2
}
