#!/bin/bash
# make bench's wire form, run INSIDE each of two guests (tests/vm/run-interop
# -s bench-pair.sh, configurations sroce-sroce and rxe-rxe): the points of
# bench-points.sh with the perftest server on A (10.0.0.1) and the client on
# B, across the emulated wire, ICRC and all. B prints "BENCH <name> <value>
# <unit>" lines (also its /results/bench.txt); scripts/bench compares them.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/vm/lib.sh
. "$HERE/lib.sh"
# shellcheck source=tests/vm/pair.sh
. "$HERE/pair.sh"
# shellcheck source=tests/vm/bench-points.sh
. "$HERE/bench-points.sh"
OUT=$RESULTS/bench.txt
POINT_IDX=0 # the point's place in the list: its own ports, no TIME_WAIT reuse

setup() {
	echo "side $ME: driver $DRV on $(uname -r); peer $PEER: $(drv_of "$PEER") on $(kver_of "$PEER")"
	install_module
	"$MODPROBE" "$MOD"
	ensure_link
	wait_for 60 ping1 "$(ip_of "$PEER")" || fail "peer $(ip_of "$PEER") does not answer ping"
}

# One point, up to three tries. Both sides meet at NAME.start first, so a
# point that failed on one side cannot leave the other a step behind. Each
# try is a handshake: A starts its server(s) and posts NAME.tN.ready ("ok" or
# "fail"), B runs the client and posts NAME.tN.done: "ok", "again" (no
# usable number) or "gaveup"; A then stops its server.
point() { # NAME KIND TOOL ARGS...
	local name=$1 kind=$2 tool=$3 try port v verdict peer_wait=$((120 * DBG_SCALE)) i n spid spids=() cpids=() outs=() pin=()
	shift 3
	n=$(bench_procs "$kind")
	post "$name.start"
	wait_peer "$name.start" "$peer_wait" || fail "the peer never reached $name"
	for try in 1 2 3; do
		port=$((18515 + POINT_IDX * 3 + try))
		if [[ $ME == A ]]; then
			spids=()
			for ((i = 0; i < n; i++)); do
				# outlives the client's own 200 s, which starts later
				timeout 260 "$tool" -d "$DEV" -x "$GIDX" -p $((port + 1000 * i)) -F "$@" >/tmp/b.srv$i 2>&1 &
				spids+=($!)
			done
			for ((i = 0; i < n; i++)); do
				wait_port $((port + 1000 * i)) 30 && continue
				kill "${spids[@]}" 2>/dev/null
				cat /tmp/b.srv$i
				post "$name.t$try.ready" fail
				fail "$tool server did not listen"
			done
			post "$name.t$try.ready" ok
			wait_peer "$name.t$try.done" $((230 * DBG_SCALE)) || { kill "${spids[@]}" 2>/dev/null; fail "the client did not finish $name"; }
			# perftest's server ends with its client; one that waits on
			# after a failed run is stopped
			for spid in "${spids[@]}"; do
				wait_for 15 bash -c "! kill -0 $spid" || kill "$spid" 2>/dev/null
				wait "$spid" || true
			done
			for ((i = 0; i < n; i++)); do cat /tmp/b.srv$i; done
			verdict=$(cat "$SYNC/in/$name.t$try.done")
			[[ $verdict == again ]] || { [[ $verdict == ok ]] || fail "the client: $verdict"; return 0; }
		else
			wait_peer "$name.t$try.ready" "$peer_wait" || { post "$name.t$try.done" gaveup; fail "the server for $name never listened"; }
			[[ $(cat "$SYNC/in/$name.t$try.ready") == ok ]] || { post "$name.t$try.done" gaveup; fail "the server for $name failed (see A's log)"; }
			cpids=() outs=()
			for ((i = 0; i < n; i++)); do
				bench_pin "$i" "$n"
				"${pin[@]}" timeout 200 "$tool" -d "$DEV" -x "$GIDX" -p $((port + 1000 * i)) -F "$@" "$(ip_of A)" >/tmp/b.cli$i 2>&1 &
				cpids+=($!) outs+=("/tmp/b.cli$i")
			done
			wait "${cpids[@]}" || true
			cat "${outs[@]}"
			v=$(bench_sum "$kind" "${outs[@]}")
			if bench_usable "$v"; then
				post "$name.t$try.done" ok
				echo "BENCH $name $v $(bench_unit "$kind")" | tee -a "$OUT"
				return 0
			fi
			post "$name.t$try.done" again
			info "try $try: no usable number from $tool (calibration?)"
		fi
	done
	[[ $ME == A ]] || fail "no usable result from $tool after 3 tries"
}

SUITE_PREFIX=
suite_begin "bench-pair(${IOP_CONFIG:-?}:$ME=$DRV)"
pair_setup setup || { suite_end; exit 1; }
for p in "${BENCH_POINTS[@]}"; do
	POINT_IDX=$((POINT_IDX + 1))
	[[ -n ${IOP_ONLY:-} && ! ${p%% *} =~ $IOP_ONLY ]] && continue
	# the start barrier, then three tries of server start, client, server end
	# shellcheck disable=SC2086 # a point is words
	run_test "${p%% *}" 1000 point $p
done
post end
wait_peer end 300 || echo "peer did not reach the end within 300s"
suite_end
