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
# try is a handshake: A starts its server and posts NAME.tN.ready ("ok" or
# "fail"), B runs the client and posts NAME.tN.done: "ok", "again" (no
# usable number) or "gaveup"; A then stops its server.
point() { # NAME KIND TOOL ARGS...
	local name=$1 kind=$2 tool=$3 try port v spid verdict peer_wait=$((120 * DBG_SCALE))
	shift 3
	post "$name.start"
	wait_peer "$name.start" "$peer_wait" || fail "the peer never reached $name"
	for try in 1 2 3; do
		port=$((18515 + POINT_IDX * 3 + try))
		if [[ $ME == A ]]; then
			# outlives the client's own 200 s, which starts later
			timeout 260 "$tool" -d "$DEV" -x "$GIDX" -p "$port" -F "$@" >/tmp/b.srv 2>&1 &
			spid=$!
			if ! wait_port "$port" 30; then
				kill "$spid" 2>/dev/null
				cat /tmp/b.srv
				post "$name.t$try.ready" fail
				fail "$tool server did not listen"
			fi
			post "$name.t$try.ready" ok
			wait_peer "$name.t$try.done" $((230 * DBG_SCALE)) || { kill "$spid" 2>/dev/null; fail "the client did not finish $name"; }
			# perftest's server ends with its client; one that waits on
			# after a failed run is stopped
			wait_for 15 bash -c "! kill -0 $spid" || kill "$spid" 2>/dev/null
			wait "$spid" || true
			cat /tmp/b.srv
			verdict=$(cat "$SYNC/in/$name.t$try.done")
			[[ $verdict == again ]] || { [[ $verdict == ok ]] || fail "the client: $verdict"; return 0; }
		else
			wait_peer "$name.t$try.ready" "$peer_wait" || { post "$name.t$try.done" gaveup; fail "the server for $name never listened"; }
			[[ $(cat "$SYNC/in/$name.t$try.ready") == ok ]] || { post "$name.t$try.done" gaveup; fail "the server for $name failed (see A's log)"; }
			timeout 200 "$tool" -d "$DEV" -x "$GIDX" -p "$port" -F "$@" "$(ip_of A)" >/tmp/b.cli 2>&1 || true
			cat /tmp/b.cli
			v=$(bench_value "$kind" /tmp/b.cli)
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
