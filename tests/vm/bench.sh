#!/bin/bash
# Benchmark matrix, run INSIDE the VM (scripts/bench boots one VM per driver).
# Loopback on one device: the same perftest runs for rdma_rxe and sroce.
# Prints "BENCH <name> <value> <unit>" lines (also /results/bench.txt).
# BENCH_PROFILE=1: every client run under `perf record -a -g` (cpu-clock),
# its report in /results/profile-<name>.txt; such a boot's numbers carry
# perf's overhead and are not comparable.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/vm/basic.sh
. "$HERE/basic.sh"

BENCH_ITERS=${BENCH_ITERS:-200}
LAT_ITERS=${LAT_ITERS:-200}
# small messages: enough of them that the run is not all setup
RATE_ITERS=${RATE_ITERS:-5000}
OUT=$RESULTS/bench.txt

# One client/server run on 127.0.0.1; prints the client's average bandwidth
# (MB/s), message rate (Mpps) or typical latency (usec), nothing if perftest
# gave no number.
bench_once() {
	local tool=$1 kind=$2 gidx port
	shift 2
	gidx=$(roce_v2_gid_index) || return 1
	port=$((18515 + RANDOM % 1000))
	timeout 200 "$tool" -d "$DEV" -x "$gidx" -p "$port" -F "$@" >/tmp/b.srv 2>&1 &
	wait_port "$port" 30 || return 1
	if [[ ${BENCH_PROFILE:-0} == 1 ]]; then
		perf record -q -e cpu-clock -F 1999 -a -g -o /tmp/perf.data -- \
			timeout 200 "$tool" -d "$DEV" -x "$gidx" -p "$port" -F "$@" 127.0.0.1 >/tmp/b.cli 2>&1
		perf report -i /tmp/perf.data --no-children --sort dso,sym --stdio --percent-limit 0.5 \
			>"$RESULTS/profile-$BENCH_NAME.txt" 2>&1 || true
	else
		timeout 200 "$tool" -d "$DEV" -x "$gidx" -p "$port" -F "$@" 127.0.0.1 >/tmp/b.cli 2>&1
	fi
	wait
	cat /tmp/b.cli >&2
	# the counters after each run: where a slow number's time went
	"$RDMA" statistic show link "$DEV/1" >&2 2>/dev/null || true
	case $kind in
	bw) awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ { v = $4 } END { print v }' /tmp/b.cli ;;
	rate) awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+/ { v = $5 } END { print v }' /tmp/b.cli ;;
	lat) awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+/ { v = $5 } END { print v }' /tmp/b.cli ;;
	esac
}

# NAME KIND TOOL perftest-args...: record one number.  perftest prints
# 0/inf when its CPU clock calibration fails (common under a busy TCG
# host): retry.
bench() {
	local name=$1 kind=$2 tool=$3 unit v try
	shift 3
	case $kind in bw) unit=MB/s ;; rate) unit=Mpps ;; lat) unit=usec ;; esac
	BENCH_NAME=$name
	for try in 1 2 3; do
		v=$(bench_once "$tool" "$kind" "$@")
		[[ $v =~ ^[0-9]+(\.[0-9]+)?$ && ! $v =~ ^0(\.0*)?$ ]] && break
		info "try $try: no usable number from $tool (calibration?)"
		v=
	done
	[[ -n $v ]] || fail "no usable result from $tool after 3 tries"
	echo "BENCH $name $v $unit" | tee -a "$OUT"
}

# The guest's copy ceiling (tests/traffic/memcpy_bw.c), host-built if the
# host could, else built here.
memcpy_ceiling() {
	local bin=${MEMCPY_BW:-$REPO/build/traffic/memcpy_bw} v
	if [[ ! -x $bin ]]; then
		bin=/tmp/memcpy_bw
		gcc -O2 -o "$bin" "$REPO/tests/traffic/memcpy_bw.c" || fail "cannot build memcpy_bw"
	fi
	v=$("$bin" 3 | awk '$1 == "memcpy_64k" { print $2 }')
	[[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "memcpy_bw printed no number"
	echo "BENCH memcpy_64k $v MB/s" | tee -a "$OUT"
}

suite_begin "bench($SROCE_DRV)"
run_test setup 300 setup
run_test link 60 ensure_link
run_test memcpy_64k 60 memcpy_ceiling
run_test send_bw_64k 300 bench send_bw_64k bw ib_send_bw -s 65536 -n "$BENCH_ITERS"
run_test write_bw_64k 300 bench write_bw_64k bw ib_write_bw -s 65536 -n "$BENCH_ITERS"
run_test read_bw_64k 300 bench read_bw_64k bw ib_read_bw -s 65536 -n "$BENCH_ITERS"
run_test write_bw_4k 300 bench write_bw_4k bw ib_write_bw -s 4096 -n "$BENCH_ITERS"
run_test send_rate_64 300 bench send_rate_64 rate ib_send_bw -s 64 -n "$RATE_ITERS"
run_test write_rate_64 300 bench write_rate_64 rate ib_write_bw -s 64 -n "$RATE_ITERS"
run_test atomic_rate 300 bench atomic_rate rate ib_atomic_bw -n "$RATE_ITERS"
run_test write_bw_64k_q4 300 bench write_bw_64k_q4 bw ib_write_bw -s 65536 -q 4 -n "$BENCH_ITERS"
run_test write_bw_64k_q16 300 bench write_bw_64k_q16 bw ib_write_bw -s 65536 -q 16 -n "$BENCH_ITERS"
run_test send_lat_2 300 bench send_lat_2 lat ib_send_lat -s 2 -n "$LAT_ITERS"
run_test write_lat_2 300 bench write_lat_2 lat ib_write_lat -s 2 -n "$LAT_ITERS"
run_test read_lat_2 300 bench read_lat_2 lat ib_read_lat -s 2 -n "$LAT_ITERS"
suite_end
