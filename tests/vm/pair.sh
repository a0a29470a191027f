# shellcheck shell=bash
# One side of a two-VM suite (interop.sh, stress.sh, ulp-pair.sh), sourced
# after lib.sh inside each guest that tests/vm/run-interop boots.
#
# Environment (set by run-interop):
#   IOP_ME        A | B (this guest; A is 10.0.0.1, B is 10.0.0.2)
#   IOP_A_DRV, IOP_B_DRV     sroce | rxe (driver of each side)
#   IOP_A_KVER, IOP_B_KVER   guest kernel of each side
#   IOP_CONFIG    configuration label (sroce-rxe, sroce-sroce, rxe-rxe, ...)
#   IOP_ONLY      optional ERE: run only tests whose base name matches
#   SROCE_KO, SROCE_MODINDEX (sroce side only)
#
# Barriers are files: this guest writes /results/sync/out/KEY (post),
# run-interop copies them into the peer's /results/sync/in/ (peer_posted).
# Both guests walk the same test list in the same order.

ME=${IOP_ME:?IOP_ME not set}
case $ME in
A) PEER=B ;;
B) PEER=A ;;
*) echo "IOP_ME must be A or B" >&2; exit 2 ;;
esac
drv_of() { local v=IOP_${1}_DRV; echo "${!v}"; }
kver_of() { local v=IOP_${1}_KVER; echo "${!v}"; }
ip_of() { [[ $1 == A ]] && echo 10.0.0.1 || echo 10.0.0.2; }
ip6_of() { [[ $1 == A ]] && echo fd00::1 || echo fd00::2; }
# a debug-kernel peer sets the pace of every pair test: both sides scale
# shellcheck disable=SC2034 # read by the scripts that source this
[[ " $IOP_A_KVER $IOP_B_KVER " == *"-sroce-dbg "* ]] && DBG_SCALE=$DBG_FACTOR
DRV=$(drv_of "$ME")
NETDEV=eth0
select_driver "$DRV"

SYNC=$RESULTS/sync
mkdir -p "$SYNC/out" "$SYNC/in" "$SYNC/tmp"
post() { # KEY [CONTENT]
	echo "${2:-}" >"$SYNC/tmp/$1"
	mv "$SYNC/tmp/$1" "$SYNC/out/$1"
}
peer_posted() { [[ -e $SYNC/in/$1 || -e $SYNC/in/PEER_GONE ]]; }
peer_gone() { [[ -e $SYNC/in/PEER_GONE ]]; }
wait_peer() { wait_for "$2" peer_posted "$1" && ! peer_gone; }

# A sleep that forks nothing: under TCG a fork every 0.2 s beside a test
# takes a tenth of a CPU from it.  read times out on a pipe nobody writes.
exec {_NAP_FD}<> <(:)
nap() { # SECS (a read that fails at once falls back to sleep)
	local rc=0
	read -rt "$1" -u "$_NAP_FD" _ || rc=$?
	((rc > 128)) || sleep "$1"
}

_kill_wait() { # PID: TERM, then KILL; fail if it does not go away (stuck in the kernel)
	local pid=$1
	kill -TERM "$pid" 2>/dev/null || return 0
	wait_for 10 bash -c "! kill -0 $pid" && return 0
	kill -KILL "$pid" 2>/dev/null
	wait_for 20 bash -c "! kill -0 $pid" && return 0
	echo "process $pid did not die after SIGKILL: state $(awk '{ print $3 }' /proc/"$pid"/stat 2>/dev/null)"
	cat /proc/"$pid"/stack 2>/dev/null || true
	return 1
}
# Wait for a pair test's server PID to end: SRV_RC is its exit status,
# "killed" if it still runs 15 s after the client posted done.NAME, or
# "timeout" at T_END (seconds since the epoch); fail if it will not die
# (its output OUT printed first).
srv_wait() { # PID NAME T_END OUT
	local pid=$1 name=$2 out=$4 end grace=
	end=$((SECONDS + $3 - $(date +%s)))
	SRV_RC=
	while kill -0 "$pid" 2>/dev/null; do
		if [[ -z $grace ]] && peer_posted "done.$name"; then
			grace=$((SECONDS + 15))
		fi
		if [[ -n $grace ]] && ((SECONDS >= grace)); then
			echo "server still running 15s after the client finished: killing it"
			_kill_wait "$pid" || { cat "$out"; fail "server: unkillable after the client finished (stuck in the kernel?)"; }
			SRV_RC=killed
			return 0
		fi
		if ((SECONDS >= end)); then
			echo "server still running at the test deadline: killing it"
			_kill_wait "$pid" || { cat "$out"; fail "server: unkillable at deadline (stuck in the kernel?)"; }
			SRV_RC=timeout
			return 0
		fi
		nap 0.2
	done
	SRV_RC=0
	wait "$pid" || SRV_RC=$?
}

# An rdma_cm listener on PORT (a pair test's READY=cm:PORT).
cm_listening() { "$RDMA" res show cm_id 2>/dev/null | grep -E "state LISTEN" | grep -qE "[:.]$1( |\$)"; }

# This side of test NAME runs CMD (set by the test's spec): the server in
# the background until READY holds, then to its end (srv_wait); the client
# once the server side is ready, bounded by T_END. PAIR_RC gets 0, the exit
# status, "killed" or "timeout"; PAIR_TS the time (date +%s.%N) the server
# started or the client found the server ready.
# shellcheck disable=SC2034 # PAIR_TS: the caller's
pair_exchange() { # ROLE NAME T_END OUT
	local role=$1 name=$2 t_end=$3 out=$4 pid tmo
	echo "[$(now)] $role ($DRV on $(uname -r)): ${CMD[*]}"
	PAIR_TS=$(date +%s.%N)
	if [[ $role == srv ]]; then
		stdbuf -oL -eL "${CMD[@]}" >"$out" 2>&1 &
		pid=$!
		case $READY in
		tcp:*) wait_port "${READY#tcp:}" 40 ;;
		cm:*) wait_for 40 cm_listening "${READY#cm:}" ;;
		out:*) wait_for 40 grep -qE "${READY#out:}" "$out" ;;
		fn:*)
			local fn
			read -ra fn <<<"${READY#fn:}"
			wait_for 40 "${fn[0]}" "$out" "${fn[@]:1}"
			;;
		none) sleep 1 ;;
		esac || {
			post "ready.$name" fail
			cat "$out"
			fail "server: not ready after 40s (${READY})"
		}
		kill -0 "$pid" 2>/dev/null || {
			post "ready.$name" fail
			cat "$out"
			fail "server: exited before becoming ready"
		}
		post "ready.$name" ok
		echo "[$(now)] server ready"
		# a server waiting for a client that gave up is killed 15 s after it
		srv_wait "$pid" "$name" "$t_end" "$out"
		PAIR_RC=$SRV_RC
		return 0
	fi
	if ! wait_peer "ready.$name" $((t_end - $(date +%s))); then
		peer_gone && fail "client: peer VM gone ($(cat "$SYNC/in/PEER_GONE"))"
		fail "client: server side never became ready"
	fi
	echo "[$(now)] server side ready"
	if [[ $(cat "$SYNC/in/ready.$name") != ok ]]; then
		fail "client: server side failed to start (see peer's log)"
	fi
	PAIR_TS=$(date +%s.%N)
	tmo=$((t_end - $(date +%s) - 2))
	((tmo >= 5)) || tmo=5
	PAIR_RC=0
	timeout -k 5 "$tmo" stdbuf -oL -eL "${CMD[@]}" >"$out" 2>&1 || PAIR_RC=$?
	# 137: timeout's KILL, 5 s after its TERM went unheeded
	if [[ $PAIR_RC == 124 || $PAIR_RC == 137 ]]; then
		PAIR_RC=timeout
	fi
	return 0
}

# After pair_exchange: post this side's exit RC, print its output OUT (NOTE
# follows the exit in the header, e.g. the run's time), keep in step with
# the peer (the client waits for the server's done.NAME, and the server for
# the client's with WAIT_CLI=1), then PAIR_PRC is the peer's exit and
# PAIR_WHO this side ("server" or "client").
# shellcheck disable=SC2034 # PAIR_WHO: the caller's
pair_done() { # ROLE NAME OUT RC NOTE WAIT_CLI
	local role=$1 name=$2 out=$3 rc=$4
	post "done.$name" "$rc"
	echo "[$(now)] --- $role output (exit $rc$5):"
	cat "$out"
	if [[ $role == cli ]]; then
		wait_peer "done.$name" 30 || echo "(server side did not report done within 30s)"
	elif [[ $6 == 1 ]]; then
		wait_peer "done.$name" 30 || echo "(client side did not report done within 30s)"
	fi
	PAIR_PRC=$(cat "$SYNC/in/done.$name" 2>/dev/null || echo '?')
	echo "[$(now)] peer ($(drv_of "$PEER")) exit: $PAIR_PRC"
	PAIR_WHO=server
	[[ $role == cli ]] && PAIR_WHO=client
	return 0
}

# lib.sh's ensure_link, always waiting for this side's IPv4 GID; its index
# goes to GIDX and /tmp/iop-gidx (read by the pair tests' subshells).
GIDX=
ensure_link() {
	if ! link_present; then
		"$RDMA" link add "$DEV" type "$LTYPE" netdev "$NETDEV"
		wait_for 10 link_present || fail "link $DEV not shown after add"
	fi
	wait_for 20 roce_v2_gid_index || fail "no RoCE v2 IPv4 GID on $DEV"
	GIDX=$(roce_v2_gid_index)
	echo "$GIDX" >/tmp/iop-gidx
}

# Both sides must be at the same point before a phase that changes the links.
t_barrier() { # KEY
	post "$1"
	wait_peer "$1" 300 || fail "peer did not reach barrier $1 within 300s"
}
peer_setup_posted() { compgen -G "$SYNC/in/setup.*" >/dev/null; }
t_setup_peer() {
	wait_for 590 peer_setup_posted || fail "peer ($PEER) setup never finished"
	peer_posted setup.ok || fail "peer ($PEER) setup failed (see its log)"
}
# run_test setup, tell the peer how it went, wait for the peer's; true iff
# both set up (else the suite ends: call suite_end and exit 1).
pair_setup() { # SETUP_FUNC
	run_test setup 240 "$1"
	post "setup.$(grep -q '^FAIL setup' "$RESULTS_TXT" && echo fail || echo ok)"
	run_test setup_peer 600 t_setup_peer
	if grep -qE '^FAIL setup' "$RESULTS_TXT"; then
		post end
		wait_peer end 60
		return 1
	fi
	ensure_link >/dev/null 2>&1
}
