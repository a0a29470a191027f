#!/bin/bash
# Benchmark matrix, run INSIDE the VM (scripts/bench boots one VM per driver).
# Loopback on one device: the same perftest runs for rdma_rxe and sroce.
# Prints "BENCH <name> <value> <unit>" lines (also /results/bench.txt).
# BENCH_PROFILE=1: every client run under `perf record -a -g --all-kernel`
# (cpu-clock, the kernel's side: user space only polls), its report in
# /results/profile-<name>.txt; such a boot's numbers carry perf's overhead
# and are not comparable, and a run without a number still gives a profile.
# BENCH_PROFILE_LIMIT: the inclusive listing's cut-off in percent (2).
# BENCH_PROFILE_SYMS: comma-separated symbols whose callers to list too.
# Each profile's call stacks, folded (one line per sample: the task and
# its CPU, then the frames from the root, "comm/[cpu];a;b;c 1"), go to
# /results/profile-<name>.folded for other views: scripts/profile-callees.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/vm/basic.sh
. "$HERE/basic.sh"
# shellcheck source=tests/vm/bench-points.sh
. "$HERE/bench-points.sh"

OUT=$RESULTS/bench.txt

# One client/server run of TOOL ARGS; prints perftest's number of KIND
# (bench_value), nothing if it gave none; KIND bw2 runs two pairs at once
# on two ports and prints their sum.  BENCH_WHERE: loop (server and
# client on $DEV, 127.0.0.1) or netns (server on sna in $NSA, client on snb
# in $NSB, across the veth pair: netns_up).
bench_once() { # KIND TOOL ARGS...
	local kind=$1 tool=$2 gidx port pre=() srv=() cli=() dst=127.0.0.1 devs i n pids=() outs=() pin=()
	shift 2
	port=$((18515 + RANDOM % 1000))
	n=$(bench_procs "$kind")
	if [[ $BENCH_WHERE == netns ]]; then
		# each run_test is a subshell: netns_up's GA and GB are not here
		if ! GA=$(ns_gid_index "$NSA" sna 10.77.0.1) || ! GB=$(ns_gid_index "$NSB" snb 10.77.0.2); then
			echo "no RoCE v2 GIDs on sna/snb" >&2
			return 1
		fi
		srv=("$IP" netns exec "$NSA" "$tool" -d sna -x "$GA")
		cli=("$IP" netns exec "$NSB" "$tool" -d snb -x "$GB")
		dst=10.77.0.1 devs="sna snb"
	else
		gidx=$(roce_v2_gid_index) || { echo "no RoCE v2 GID on $DEV" >&2; return 1; }
		srv=("$tool" -d "$DEV" -x "$gidx") cli=("${srv[@]}") devs=$DEV
	fi
	for ((i = 0; i < n; i++)); do
		timeout 200 "${srv[@]}" -p $((port + 1000 * i)) -F "$@" >/tmp/b.srv$i 2>&1 &
	done
	for ((i = 0; i < n; i++)); do
		if [[ $BENCH_WHERE == netns ]]; then
			wait_for 30 ns_listening "$NSA" $((port + 1000 * i)) || { cat /tmp/b.srv$i >&2; return 1; }
		else
			wait_port $((port + 1000 * i)) 30 || { cat /tmp/b.srv$i >&2; return 1; }
		fi
	done
	[[ ${BENCH_PROFILE:-0} == 1 ]] && pre=(perf record -q -e cpu-clock -F 1999 -a -g --all-kernel -o /tmp/perf.data --)
	# the clients at once, the first under perf, which samples all CPUs
	for ((i = 0; i < n; i++)); do
		bench_pin "$i" "$n"
		"${pre[@]}" "${pin[@]}" timeout 200 "${cli[@]}" -p $((port + 1000 * i)) -F "$@" "$dst" >/tmp/b.cli$i 2>&1 &
		pids+=($!) outs+=("/tmp/b.cli$i") pre=()
	done
	wait "${pids[@]}"
	if [[ ${BENCH_PROFILE:-0} == 1 ]]; then
		{
			perf report -i /tmp/perf.data --no-children --sort sym --stdio --percent-limit 0.5 -g none
			echo "# with children (inclusive), callers folded:"
			perf report -i /tmp/perf.data --children --sort sym --stdio --percent-limit "${BENCH_PROFILE_LIMIT:-2}" -g none
			echo "# call chains of the symbols over 3% (self):"
			perf report -i /tmp/perf.data --no-children --sort sym --stdio --percent-limit 3 \
				-g caller,2,callee,function,percent
			if [[ -n ${BENCH_PROFILE_SYMS:-} ]]; then
				echo "# callers of $BENCH_PROFILE_SYMS:"
				perf report -i /tmp/perf.data --no-children --sort sym --stdio \
					--symbols "$BENCH_PROFILE_SYMS" -g caller,0.5,callee,function,percent
			fi
		} >"$RESULTS/profile-$BENCH_NAME.txt" 2>&1 || true
		perf script -i /tmp/perf.data -F comm,cpu,ip,sym 2>/dev/null |
			awk '/^[^\t]/ { h = $0; sub(/^[ \t]+/, "", h); sub(/[ \t]+$/, "", h); gsub(/[ \t]+/, "/", h); next }
			     NF == 0 { if (n) { s = h; for (i = n; i > 0; i--) s = s ";" st[i]; print s, 1 } n = 0; next }
			     { sub(/\+0x[0-9a-f]+$/, "", $2); st[++n] = $2 }' >"$RESULTS/profile-$BENCH_NAME.folded" || true
	fi
	wait
	cat "${outs[@]}" >&2
	# the counters after each run: where a slow number's time went
	for d in $devs; do "$RDMA" statistic show link "$d/1" >&2 2>/dev/null || true; done
	bench_sum "$kind" "${outs[@]}"
}

# NAME KIND TOOL ARGS...: record one number, three tries.
bench() {
	local name=$1 kind=$2 v try
	shift 2
	BENCH_NAME=$name
	for try in 1 2 3; do
		v=$(bench_once "$kind" "$@") || v=
		bench_usable "$v" && break
		info "try $try: no usable number from $1 (calibration?)"
		v=
		# the profile is what a profiled boot is for
		[[ ${BENCH_PROFILE:-0} == 1 ]] && { v=none; break; }
	done
	[[ -n $v ]] || fail "no usable result from $1 after 3 tries"
	echo "BENCH $name $v $(bench_unit "$kind")" | tee -a "$OUT"
}

# The guest's copy ceiling (tests/traffic/memcpy_bw.c), host-built if the
# host could, else built here.
memcpy_ceiling() {
	local bin=$REPO/build/traffic/memcpy_bw v
	if [[ ! -x $bin ]]; then
		bin=/tmp/memcpy_bw
		gcc -O2 -o "$bin" "$REPO/tests/traffic/memcpy_bw.c" || fail "cannot build memcpy_bw"
	fi
	v=$("$bin" 3 | awk '$1 == "memcpy_64k" { print $2 }')
	bench_usable "$v" || fail "memcpy_bw printed no number"
	echo "BENCH memcpy_64k $v MB/s" | tee -a "$OUT"
}

# What a post costs before any driver work (tests/traffic/doorbell_floor.c):
# librxe rings the doorbell with a write() to uverbs for every
# ibv_post_send, and a 2 B round trip rings two.  Its other numbers go to
# the log.
doorbell_floor() {
	local bin=$REPO/build/traffic/doorbell_floor gidx v
	if [[ ! -x $bin ]]; then
		bin=/tmp/doorbell_floor
		gcc -O2 -o "$bin" "$REPO/tests/traffic/doorbell_floor.c" -libverbs || fail "cannot build doorbell_floor"
	fi
	gidx=$(roce_v2_gid_index) || fail "no RoCE v2 GID on $DEV"
	"$bin" "$DEV" "$gidx" 100000 >/tmp/floor.txt || fail "doorbell_floor failed"
	cat /tmp/floor.txt
	v=$(awk '$1 == "doorbell" { print $2 }' /tmp/floor.txt)
	bench_usable "$v" || fail "doorbell_floor printed no number"
	echo "BENCH doorbell $v usec" | tee -a "$OUT"
}

# The wire path inside one VM: two namespaces over a veth pair (UDP, IP,
# a netdev and the ICRC, no QEMU link).  sroce only: rdma_rxe has no
# namespace support on these kernels.  Its points are named netns_<point>.
netns_bench_can_run() {
	[[ $SROCE_DRV == sroce && ${BENCH_NETNS:-1} == 1 && -e /proc/self/ns/net ]] &&
		{ "$MODPROBE" -q veth 2>/dev/null || [[ -d /sys/module/veth ]]; }
}
netns_bench_up() {
	netns_up
	# the same check as basic's netns test: this is not local delivery
	dcount sna loopback_pkts >/tmp/netns-loop0
}
netns_bench_check() {
	(($(dcount sna loopback_pkts) == $(cat /tmp/netns-loop0))) || fail "netns points went through local delivery"
	(($(dcount snb rcvd_icrc_err) == 0)) || fail "ICRC errors across the veth pair"
	(($(dcount sna rcvd_pkts) > 0 && $(dcount snb rcvd_pkts) > 0)) || fail "no packets crossed the veth pair"
	netns_down
}

# BENCH_SQ_POLL_US: sroce's opt-in send queue poller (sq_poll_us) for the run
sq_poll_set() {
	echo "$BENCH_SQ_POLL_US" >/sys/module/sroce/parameters/sq_poll_us || fail "cannot set sq_poll_us"
	[[ $(cat /sys/module/sroce/parameters/sq_poll_us) == "$BENCH_SQ_POLL_US" ]] || fail "sq_poll_us not $BENCH_SQ_POLL_US"
}
sq_poll_report() {
	info "sq_poll_starts $(counter sq_poll_starts), sq_poll_doorbells $(counter sq_poll_doorbells), sq_poll_backoffs $(counter sq_poll_backoffs)"
}

suite_begin "bench($SROCE_DRV)"
run_test setup 300 setup
run_test link 60 ensure_link
sq_poll=0
[[ -n ${BENCH_SQ_POLL_US:-} && $SROCE_DRV == sroce ]] && sq_poll=1
((sq_poll)) && run_test sq_poll 10 sq_poll_set
run_test memcpy_64k 60 memcpy_ceiling
run_test doorbell 120 doorbell_floor
BENCH_WHERE=loop
for p in "${BENCH_POINTS[@]}"; do
	# shellcheck disable=SC2086 # a point is words
	run_test "${p%% *}" 300 bench $p
done
((sq_poll)) && run_test sq_poll_counters 10 sq_poll_report
if netns_bench_can_run; then
	BENCH_WHERE=netns
	run_test netns_up 120 netns_bench_up
	for p in "${BENCH_POINTS[@]}"; do
		# shellcheck disable=SC2086 # a point is words
		run_test "netns_${p%% *}" 300 bench netns_$p
	done
	run_test netns_check 120 netns_bench_check
fi
suite_end
