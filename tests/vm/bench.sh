#!/bin/bash
# Benchmark matrix, run INSIDE the VM (scripts/bench boots one VM per driver).
# Loopback on one device: the same perftest runs for rdma_rxe and sroce.
# Prints "BENCH <name> <value> <unit>" lines (also /results/bench.txt).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/vm/basic.sh
. "$HERE/basic.sh"

BENCH_ITERS=${BENCH_ITERS:-200}
LAT_ITERS=${LAT_ITERS:-200}
OUT=$RESULTS/bench.txt

# One client/server run on 127.0.0.1; prints the client's average bandwidth
# (MB/s) or typical latency (usec), nothing if perftest gave no number.
bench_once() {
	local tool=$1 kind=$2 gidx port
	shift 2
	gidx=$(roce_v2_gid_index) || return 1
	port=$((18515 + RANDOM % 1000))
	timeout 200 "$tool" -d "$DEV" -x "$gidx" -p "$port" -F "$@" >/tmp/b.srv 2>&1 &
	wait_port "$port" 30 || return 1
	timeout 200 "$tool" -d "$DEV" -x "$gidx" -p "$port" -F "$@" 127.0.0.1 >/tmp/b.cli 2>&1
	wait
	cat /tmp/b.cli >&2
	# the counters after each run: where a slow number's time went
	"$RDMA" statistic show link "$DEV/1" >&2 2>/dev/null || true
	if [[ $kind == bw ]]; then
		awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ { v = $4 } END { print v }' /tmp/b.cli
	else
		awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+/ { v = $5 } END { print v }' /tmp/b.cli
	fi
}

# name tool perftest-args...: record one number.  perftest prints 0/inf when
# its CPU clock calibration fails (common under a busy TCG host): retry.
bench() {
	local name=$1 tool=$2 kind=bw unit="MB/s" v try
	shift 2
	case $tool in *_lat) kind=lat unit=usec ;; esac
	for try in 1 2 3; do
		v=$(bench_once "$tool" "$kind" "$@")
		[[ $v =~ ^[0-9]+(\.[0-9]+)?$ && $v != 0.00 ]] && break
		info "try $try: no usable number from $tool (calibration?)"
		v=
	done
	[[ -n $v ]] || fail "no usable result from $tool after 3 tries"
	echo "BENCH $name $v $unit" | tee -a "$OUT"
}

suite_begin "bench($SROCE_DRV)"
run_test setup 300 setup
run_test link 60 ensure_link
run_test send_bw_64k 300 bench send_bw_64k ib_send_bw -s 65536 -n "$BENCH_ITERS"
run_test write_bw_64k 300 bench write_bw_64k ib_write_bw -s 65536 -n "$BENCH_ITERS"
run_test read_bw_64k 300 bench read_bw_64k ib_read_bw -s 65536 -n "$BENCH_ITERS"
run_test write_bw_4k 300 bench write_bw_4k ib_write_bw -s 4096 -n "$BENCH_ITERS"
run_test send_lat_2 300 bench send_lat_2 ib_send_lat -s 2 -n "$LAT_ITERS"
run_test write_lat_2 300 bench write_lat_2 ib_write_lat -s 2 -n "$LAT_ITERS"
run_test read_lat_2 300 bench read_lat_2 ib_read_lat -s 2 -n "$LAT_ITERS"
suite_end
