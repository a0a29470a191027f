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
# shellcheck source=tests/vm/bench-points.sh
. "$HERE/bench-points.sh"

OUT=$RESULTS/bench.txt

# One client/server run on 127.0.0.1 of TOOL ARGS; prints perftest's number
# of KIND (bench_value), nothing if it gave none.
bench_once() { # KIND TOOL ARGS...
	local kind=$1 tool=$2 gidx port pre=()
	shift 2
	gidx=$(roce_v2_gid_index) || { echo "no RoCE v2 GID on $DEV" >&2; return 1; }
	port=$((18515 + RANDOM % 1000))
	timeout 200 "$tool" -d "$DEV" -x "$gidx" -p "$port" -F "$@" >/tmp/b.srv 2>&1 &
	wait_port "$port" 30 || { cat /tmp/b.srv >&2; return 1; }
	[[ ${BENCH_PROFILE:-0} == 1 ]] && pre=(perf record -q -e cpu-clock -F 1999 -a -g -o /tmp/perf.data --)
	"${pre[@]}" timeout 200 "$tool" -d "$DEV" -x "$gidx" -p "$port" -F "$@" 127.0.0.1 >/tmp/b.cli 2>&1
	if ((${#pre[@]})); then
		perf report -i /tmp/perf.data --no-children --sort dso,sym --stdio --percent-limit 0.5 \
			>"$RESULTS/profile-$BENCH_NAME.txt" 2>&1 || true
	fi
	wait
	cat /tmp/b.cli >&2
	# the counters after each run: where a slow number's time went
	"$RDMA" statistic show link "$DEV/1" >&2 2>/dev/null || true
	bench_value "$kind" /tmp/b.cli
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

suite_begin "bench($SROCE_DRV)"
run_test setup 300 setup
run_test link 60 ensure_link
run_test memcpy_64k 60 memcpy_ceiling
for p in "${BENCH_POINTS[@]}"; do
	# shellcheck disable=SC2086 # a point is words
	run_test "${p%% *}" 300 bench $p
done
suite_end
