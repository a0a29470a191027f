#!/bin/bash
# Two-VM stress suite, run INSIDE each of the two guests (see tests/vm/run-interop
# -s stress.sh, which boots the pair back to back and relays barriers).
#
# Both guests put a tc netem qdisc on their own eth0 egress (so both directions
# of the wire are impaired), then run the data-verifying RC program rc_verify
# (tests/traffic/rc_verify.c, built on the host) with one side as server and the
# other as client, with messages far larger than the PSN window and every RC
# opcode (send, write, write-imm, read, cmp&swap, fetch&add), then remove the
# qdisc. A test passes iff rc_verify reports OK on both sides within its time
# bound, each sroce side's recovery counters moved (retransmissions, NAKs,
# duplicate or out-of-sequence packets; ICRC drops for the corrupt profile)
# and the kernel log stays clean. rdma_rxe sides only print their counters.
# RNR and a vanishing peer are checked on a clean link: the client must see
# the expected completion error within a bound, never hang.
#
# Environment (set by run-interop): pair.sh's (IOP_*, SROCE_KO), and
#   STRESS_LEVEL  bounded (default: a subset that fits ~8 min of VM time per
#                 configuration) | full (every profile, both directions, -n 3,
#                 every size up to 4 MiB)
#   STRESS_TMO    optional: rc_verify -t (bound of each single wait, i.e. how
#                 long a hang takes to fail) for the netem tests (default 60;
#                 full: 180)
#   STRESS_RCV_ARGS optional: rc_verify plan options for the netem runs
#                 instead of the level's (e.g. "-n 1 -q 1 -S 4194304 -o write")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=${SVM_REPO:-$(cd "$HERE/../.." && pwd)}
# shellcheck source=tests/vm/lib.sh
. "$HERE/lib.sh"
# shellcheck source=tests/vm/pair.sh
. "$HERE/pair.sh"
LEVEL=${STRESS_LEVEL:-bounded}
case $LEVEL in bounded | full) ;; *) echo "STRESS_LEVEL must be bounded or full (got '$LEVEL')" >&2; exit 2 ;; esac

# --- the traffic tool -----------------------------------------------------------
# run-interop snapshots the host-built binary next to this script.
RCV=
find_rc_verify() {
	local c
	for c in "$HERE/traffic/rc_verify" "$REPO/build/traffic/rc_verify" /tmp/rc_verify; do
		[[ -x $c ]] && { RCV=$c; return 0; }
	done
	if [[ -f $REPO/tests/traffic/rc_verify.c ]]; then
		info "compiling rc_verify in the guest (slow under TCG)"
		gcc -O2 -Wall -o /tmp/rc_verify "$REPO/tests/traffic/rc_verify.c" -libverbs && RCV=/tmp/rc_verify && return 0
	fi
	return 1
}

# --- counters ---------------------------------------------------------------------
# `rdma statistic show link DEV/1` prints "link DEV/1 name value name value ...".
cnt_snap() { # FILE: one "name value" per line
	"$RDMA" statistic show link "$DEV/1" 2>/dev/null |
		awk '{ for (i = 3; i < NF; i += 2) print $i, $(i + 1) }' >"$1"
}
# cnt_delta BEFORE AFTER ERE: sum of the increases of the counters matching ERE
cnt_delta() {
	awk -v re="$3" 'NR == FNR { b[$1] = $2; next } $1 ~ re { s += $2 - b[$1] } END { print s + 0 }' "$1" "$2"
}
cnt_show() { # BEFORE AFTER: the counters that moved
	awk 'NR == FNR { b[$1] = $2; next } $2 != b[$1] { printf "%s +%d  ", $1, $2 - b[$1] } END { print "" }' "$1" "$2"
}
# Counter classes (sroce's names; see drivers/core/device.c).
RE_RECOVERY='retry_timeout|retry_nak|retrans|duplicate_request|out_of_seq|nak_seq|stale_ack|dup_req|oos'
RE_ICRC='icrc'
RE_RNR='rnr'

# --- the pair runner ------------------------------------------------------------
# A test is a "spec" function called as: SPEC srv|cli ARGS...; it sets
#   CMD=(...)    the command for this role
#   READY=       server readiness: tcp:PORT | none
#   EXPECT=      ok: both sides exit 0 and print GREP
#                err: the same, and the client (rc_verify -E) must have seen
#                its expected completion error within WITHIN seconds
#   GREP=        ERE the output must match
#   CNT_RE=      ERE of sroce counters of which at least one must move on this
#                side (sroce sides only; empty: no check)
#   CNT_EQ=()    "counter=N": on a sroce side the counter must move by exactly N
_port=19000

_pair_body() { # ROLE NAME TMO SPEC ARGS...
	local role=$1 name=$2 tmo=$3 spec=$4 t_end rc out c0 c1 ts te
	shift 4
	t_end=$(($(date +%s) + tmo - 8))
	[[ -n ${IOP_TRACE:-} && $name =~ $IOP_TRACE ]] && set -x
	read -r GIDX </tmp/iop-gidx
	CMD=() READY=none EXPECT=ok GREP='' CNT_RE='' WITHIN='' CNT_EQ=()
	"$spec" "$role" "$@"
	out=$RESULTS/tests/$name.$role.out
	c0=/tmp/cnt.$name.0 c1=/tmp/cnt.$name.1
	cnt_snap "$c0"
	pair_exchange "$role" "$name" "$t_end" "$out"
	rc=$PAIR_RC ts=$PAIR_TS
	te=$(date +%s.%N)
	local secs
	secs=$(awk -v a="$ts" -v b="$te" 'BEGIN { printf "%.1f", b - a }')
	pair_done "$role" "$name" "$out" "$rc" " after ${secs}s" 0
	cnt_snap "$c1"
	local who=$PAIR_WHO
	echo "counters that moved on $DEV ($DRV): $(cnt_show "$c0" "$c1")"
	assert_dmesg_clean "test $name"
	local last=
	[[ $rc == 0 ]] || last=$({ grep -vE '^\s*$' "$out" || true; } | tail -n 2 | tr '\n' ' ' | cut -c1-200)
	[[ $rc == timeout ]] && fail "$who ($DRV) did not finish within the test bound (${secs}s; hung?): $last"
	[[ $rc == 0 ]] || fail "$who ($DRV) exit $rc after ${secs}s: $last"
	if [[ -n $GREP ]] && ! grep -qE "$GREP" "$out"; then
		fail "$who ($DRV) output lacks /$GREP/: $last"
	fi
	if [[ $EXPECT == err && $role == cli && -n $WITHIN ]]; then
		# "rc_verify: client got the expected error after 1.23 s: ..."
		local es
		es=$(sed -nE 's/.*got the expected error after ([0-9.]+) s.*/\1/p' "$out" | head -n1)
		[[ -n $es ]] || fail "client ($DRV) output lacks 'got the expected error after': $last"
		awk -v s="$es" -v w="$WITHIN" 'BEGIN { exit !(s <= w) }' ||
			fail "client ($DRV) saw the expected error only after ${es}s (bound ${WITHIN}s)"
		info "client saw the expected error after ${es}s (bound ${WITHIN}s; whole run ${secs}s)"
	fi
	if [[ $DRV == sroce && -n $CNT_RE ]]; then
		local d
		d=$(cnt_delta "$c0" "$c1" "$CNT_RE")
		info "sroce counters /$CNT_RE/ moved by $d"
		((d > 0)) || fail "$who (sroce): no counter matching /$CNT_RE/ moved (moved: $(cnt_show "$c0" "$c1"))"
	fi
	if [[ $DRV == sroce ]]; then
		local e d
		for e in "${CNT_EQ[@]}"; do
			d=$(cnt_delta "$c0" "$c1" "^${e%%=*}\$")
			info "sroce counter ${e%%=*} moved by $d (must be ${e#*=})"
			((d == ${e#*=})) || fail "$who (sroce): ${e%%=*} moved by $d, expected exactly ${e#*=} (moved: $(cnt_show "$c0" "$c1"))"
		done
	fi
	return 0
}

# pair NAME TMO SERVERS SPEC ARGS...: run the test once per server side in
# SERVERS ("A B": A serves, then B serves).
SKIPS=() # "ERE|reason": tests to skip in this configuration
skip_reason() {
	local s
	for s in "${SKIPS[@]}"; do
		[[ $1 =~ ^(${s%%|*})$ ]] && { echo "${s#*|}"; return 0; }
	done
	return 1
}
pair() {
	local base=$1 tmo=$2 servers=$3 spec=$4 srv name why
	shift 4
	if [[ -n ${IOP_ONLY:-} && ! $base =~ $IOP_ONLY ]]; then return 0; fi
	for srv in $servers; do
		if [[ $IOP_A_DRV != "$IOP_B_DRV" ]]; then name=$base.srv_$(drv_of "$srv"); else name=$base.srv_$srv; fi
		if why=$(skip_reason "$name"); then
			_record "SKIP $name: $why"
			continue
		fi
		_port=$((_port + 1))
		if peer_gone; then
			_T_FAIL=$((_T_FAIL + 1))
			_record "FAIL $name (0s): not run: peer VM gone ($(cat "$SYNC/in/PEER_GONE"))"
			continue
		fi
		PORT=$_port SRV_IP=$(ip_of "$srv")
		export PORT SRV_IP
		if [[ $srv == "$ME" ]]; then
			run_test "$name" "$tmo" _pair_body srv "$name" "$tmo" "$spec" "$@"
		else
			run_test "$name" "$tmo" _pair_body cli "$name" "$tmo" "$spec" "$@"
		fi
	done
}

# --- test specs -------------------------------------------------------------------
# rc_verify: EXPECT CNT_RE [rc_verify args...]; a "cli:" prefixed argument goes
# to the client only, "srv:" to the server only; "cnt_cli:NAME=N" and
# "cnt_srv:NAME=N" add to that side's CNT_EQ.
s_rcv() {
	local role=$1 a
	EXPECT=$2 CNT_RE=$3
	shift 3
	if [[ $role == srv ]]; then CMD=("$RCV" -s); else CMD=("$RCV" -c "$SRV_IP"); fi
	CMD+=(-d "$DEV" -x "$GIDX" -p "$PORT")
	for a in "$@"; do
		case $a in
		cnt_cli:*) [[ $role == cli ]] && CNT_EQ+=("${a#cnt_cli:}") ;;
		cnt_srv:*) [[ $role == srv ]] && CNT_EQ+=("${a#cnt_srv:}") ;;
		cli:*) [[ $role == cli ]] && CMD+=("${a#cli:}") ;;
		srv:*) [[ $role == srv ]] && CMD+=("${a#srv:}") ;;
		*) CMD+=("$a") ;;
		esac
	done
	READY=tcp:$PORT
	GREP='^rc_verify: OK'
	return 0
}
s_rcv_err() { # WITHIN [args...]: the client must see its -E error within WITHIN s
	local role=$1 w=$2
	shift 2
	s_rcv "$role" err "" "$@"
	WITHIN=$w
	return 0
}

# --- setup --------------------------------------------------------------------------
setup() {
	echo "side $ME: driver $DRV on $(uname -r); peer $PEER: $(drv_of "$PEER") on $(kver_of "$PEER"); config ${IOP_CONFIG:-?}; level $LEVEL"
	find_rc_verify || fail "rc_verify not found: build it on the host (gcc -O2 -Wall -o build/traffic/rc_verify tests/traffic/rc_verify.c -libverbs)"
	info "traffic tool: $RCV"
	echo "$RCV" >/tmp/stress-rcv
	[[ -x $TC ]] || fail "tc (iproute2) not found"
	"$MODPROBE" sch_netem || fail "modprobe sch_netem failed"
	install_module
	info "[$(now)] modprobe $MOD"
	"$MODPROBE" "$MOD"
	# STRESS_DYNDBG=1: the engine's recovery decisions (pr_debug) go to dmesg
	if [[ -n ${STRESS_DYNDBG:-} && $DRV == sroce ]]; then
		echo "module $MOD +p" >/proc/dynamic_debug/control || info "no dynamic debug"
	fi
	ensure_link
	info "[$(now)] link up"
	"$RDMA" link show
	ibv_devinfo -v -d "$DEV" | grep -E 'GID\[|active_mtu|state:'
	info "RoCE v2 IPv4 GID index $GIDX"
	info "counters: $("$RDMA" statistic show link "$DEV/1" 2>&1)"
	info "[$(now)] pinging the peer"
	wait_for 60 ping1 "$(ip_of "$PEER")" || fail "peer $(ip_of "$PEER") does not answer ping"
	info "[$(now)] ping ok"
}

# netem on this side's egress; both sides must have it before traffic starts.
# Profiles follow each other with `tc qdisc replace`; netem_off ends them.
t_netem_set() { # PROFILE ARGS...
	local p=$1
	shift
	if "$TC" qdisc show dev "$NETDEV" | grep -q netem; then
		echo "previous profile's qdisc:"
		"$TC" -s qdisc show dev "$NETDEV"
	fi
	"$TC" qdisc replace dev "$NETDEV" root netem "$@" || fail "tc qdisc replace dev $NETDEV root netem $* failed"
	"$TC" qdisc show dev "$NETDEV"
	post "netem.$p"
	wait_peer "netem.$p" 300 || fail "peer did not set its netem qdisc ($p) within 300s"
}
t_netem_off() {
	local rc=0
	if "$TC" qdisc show dev "$NETDEV" | grep -q netem; then
		"$TC" -s qdisc show dev "$NETDEV"
		"$TC" qdisc del dev "$NETDEV" root || rc=1
	fi
	post netem_off
	((rc == 0)) || fail "tc qdisc del dev $NETDEV root failed"
	wait_peer netem_off 600 || fail "peer did not remove its netem qdisc within 600s"
	# Both links clean again: the next phase must not start on a dead path.
	wait_for 30 ping1 "$(ip_of "$PEER")" || fail "peer does not answer ping after the netem profiles"
}

# profile NAME SERVERS TMO CNT_RE "netem args" [rc_verify args...]
profile() {
	local p=$1 servers=$2 tmo=$3 cre=$4 nargs=$5
	shift 5
	if [[ -n ${IOP_ONLY:-} && ! $p =~ $IOP_ONLY ]]; then return 0; fi
	# shellcheck disable=SC2086
	run_test "netem_$p" 320 t_netem_set "$p" $nargs
	pair "$p" "$tmo" "$servers" s_rcv ok "$cre" "$@"
}

# --- configuration-specific skips (both sides compute the same list) ---------------
SKIPS=()

# --- the suite ------------------------------------------------------------------------
SUITE_PREFIX=
suite_begin "stress(${IOP_CONFIG:-?}:$ME=$DRV:$LEVEL)"
pair_setup setup || { suite_end; exit 1; }
RCV=$(cat /tmp/stress-rcv)

# Every netem run moves messages larger than the PSN window (1 MiB, 4 MiB:
# 1024, 4096 packets at the default 1024-byte path MTU) with every RC opcode,
# at most DEPTH (-q) WQEs in flight. rc_verify -t bounds every single wait: a
# hang fails after WAIT seconds; TMO bounds the whole test.
#
# Reorder: netem reorders the packets it does not delay ("reorder 25% 50%"
# sends 25% at once, the rest 5 ms late). Jitter on top ("delay 5ms 2ms")
# reorders nearly every packet at the ~1000 packets/s of a TCG guest, and
# go-back-N then advances by a packet or two per round trip: rdma_rxe needs
# 90-100 s per MiB there (a 4 MiB run would take hours), so that profile,
# reorder_jitter, runs at the full level only and with sizes up to 1 MiB.
if [[ $LEVEL == full ]]; then
	BIG=(-n 3 -q 2) # rc_verify's default sizes: 1 B .. 4 MiB
	JIT=(-n 1 -q 1 -S '1,4096,65537,1048576')
	# rdma_rxe as the client (READ requester) drops every READ response
	# past a gap and waits for its ACK timer (rxe_comp.c check_psn): under
	# 25% reordering it gains a few packets per timeout, and a 4 MiB READ
	# takes minutes. Its reorder runs move up to 1 MiB (4 times the PSN
	# window), one WQE at a time.
	RXECLI=(-n 3 -q 1 -S '1,4096,65537,1048576')
	BOTH="A B" ONE="A B" TMO=1800 WAIT=180
else
	# ~42 MB through loss 1% with A serving; 1 MiB elsewhere.
	BIG=(-n 1 -q 2 -S '1,4096,65537,1048576,4194304')
	MID=(-n 1 -q 2 -S '1,65537,1048576')
	BOTH="A B" ONE="A" TMO=240 WAIT=60
fi
# KASAN and lockdep make the debug kernel 4-5 times slower: same traffic,
# longer bounds (its bounded loss1 took over 240 s)
TMO=$((TMO * DBG_SCALE)) WAIT=$((WAIT * DBG_SCALE))
[[ -n ${STRESS_TMO:-} ]] && WAIT=$STRESS_TMO
# rdma_rxe as the READ requester drops every response past a lost one until
# the stream passes the READ's last PSN or its ACK timer sees 67 ms of
# silence (rxe_comp.c: check_psn, and COMPST_EXIT re-arms the timer whenever
# its queue drains), so each loss costs it the rest of the stream. Two 4 MiB
# READs at loss 5% took it 105-109 s from rdma_rxe and 106 s from sroce
# (sroce reading from rdma_rxe: 9 s), and one of its batches in a full run
# passed the 180 s wait. Its waits under loss 5% are three times longer.
RXEWAIT=$((WAIT * 3))
# shellcheck disable=SC2206
[[ -n ${STRESS_RCV_ARGS:-} ]] && BIG=($STRESS_RCV_ARGS) MID=($STRESS_RCV_ARGS) JIT=($STRESS_RCV_ARGS)
REORDER="delay 5ms reorder 25% 50%"
if [[ $LEVEL == full ]]; then
	# A baseline on the clean link first: tells a broken pair from broken recovery.
	pair clean "$TMO" "$ONE" s_rcv ok "" -t "$WAIT" "${BIG[@]}"
	# profile NAME SERVERS TMO COUNTERS NETEM [rc_verify args]
	profile loss1 "$BOTH" "$TMO" "$RE_RECOVERY" "loss 1%" -t "$WAIT" "${BIG[@]}"
	srv_big='' srv_rxecli=''
	for s in $BOTH; do
		if [[ $(drv_of "$([[ $s == A ]] && echo B || echo A)") == rxe ]]; then
			srv_rxecli+=" $s"
		else
			srv_big+=" $s"
		fi
	done
	profile loss5 "$srv_big" "$TMO" "$RE_RECOVERY" "loss 5%" -t "$WAIT" "${BIG[@]}"
	pair loss5 "$TMO" "$srv_rxecli" s_rcv ok "$RE_RECOVERY" -t "$RXEWAIT" "${BIG[@]}"
	profile reorder "$srv_big" "$TMO" "$RE_RECOVERY" "$REORDER" -t "$WAIT" "${BIG[@]}"
	pair reorder "$TMO" "$srv_rxecli" s_rcv ok "$RE_RECOVERY" -t "$WAIT" "${RXECLI[@]}"
	profile reorder_jitter "$BOTH" "$TMO" "$RE_RECOVERY" "delay 5ms 2ms reorder 25% 50%" -t 300 "${JIT[@]}"
	profile dup5 "$BOTH" "$TMO" "$RE_RECOVERY" "duplicate 5%" -t "$WAIT" "${BIG[@]}"
	profile corrupt1 "$BOTH" "$TMO" "$RE_ICRC" "corrupt 1%" -t "$WAIT" "${BIG[@]}"
else
	profile loss1 "A" "$TMO" "$RE_RECOVERY" "loss 1%" -t "$WAIT" "${BIG[@]}"
	pair loss1 "$TMO" "B" s_rcv ok "$RE_RECOVERY" -t "$WAIT" "${MID[@]}"
	profile reorder "$ONE" "$TMO" "$RE_RECOVERY" "$REORDER" -t "$WAIT" "${MID[@]}"
	profile dup5 "$ONE" "$TMO" "$RE_RECOVERY" "duplicate 5%" -t "$WAIT" "${MID[@]}"
	profile corrupt1 "$ONE" "$TMO" "$RE_ICRC" "corrupt 1%" -t "$WAIT" "${MID[@]}"
fi
run_test netem_off 620 t_netem_off
# RNR on a clean link: receives posted 500 ms late (rnr_retry 7 = infinite)
# must complete; never posted, rnr_retry 2 must end in RNR-retry-exceeded.
pair rnr_late 180 "$ONE" s_rcv ok "$RE_RNR" -o send -S 1,65537 -n 1 -q 4 -R 7 srv:-L srv:500 -t 60
# rnr_retry 2: the first RNR NAK and two retries, exactly three NAKs.
pair rnr_never 120 "$ONE" s_rcv_err 20 -o send -S 65537 -n 1 -q 4 srv:-N cli:-R cli:2 cli:-E cli:rnr_retry_exc cli:-W cli:60 -t 60 cnt_cli:rnr_retry=3 cnt_srv:send_rnr_nak=3
# The server vanishes after QP setup: retry_cnt 2 at ACK timeout 2^14 x
# 4.096 us (67 ms) must end in retry-exceeded within seconds, not never.
pair peer_vanish 120 "$ONE" s_rcv_err 20 -o send,write -S 1048576 -n 1 -q 4 cli:-K cli:-E cli:retry_exc cli:-W cli:60 -r 2 -T 14 -t 60
post end
wait_peer end 300 || echo "peer did not reach the end within 300s"
suite_end
