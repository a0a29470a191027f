#!/bin/bash
# Kernel storage clients across the wire, run INSIDE each of two guests
# (tests/vm/run-interop -s ulp-pair.sh): guest A (10.0.0.1) is the target,
# guest B (10.0.0.2) the host, each on its own device (sroce or rdma_rxe,
# so sroce hosts are proven against rdma_rxe targets and the reverse).
#
#   nvme         nvmet-rdma on A, nvme-rdma on B: storage.sh's host run
#                (fio verify=crc32c 4 KiB qd 1/32, 128 KiB, 1 MiB; a pattern
#                across disconnect/reconnect).
#   nvme_flap    B's link goes down for NVME_FLAP_DOWN (15) seconds while a
#                rate-limited fio verify job runs: nvme-rdma must reconnect
#                and fio end with every block verified.
#   nvme_target_gone  A removes its port and subsystem under B's running
#                fio: B's I/O must end in errors within a bound, the
#                controller go away, nothing hang.
#   nfs          knfsd on A (rdma 20049), B mounts -o rdma: a tree and an
#                O_DIRECT file, checked on A's side, then after a remount.
#   iser         LIO with iSER on A's portal, open-iscsi (iser iface) on B.
#   srp          ib_srpt on A, ib_srp on B over rdma_cm, no global rkey.
# Every sroce side must show the I/O in its packet counters and no drop of
# its own; dmesg stays clean on both sides (suite_end).
# ULP_SIZE_MB (default 16) bounds each fio job; ULP_FULL=1: 256 MiB
# (make check-ulp: 64, ULP_PAIR_SIZE_MB in scripts/check).
# nvme_flap is SKIP when B is rdma_rxe, which hangs there on its own
# (ULP_RXE_FLAP=1 runs it anyway).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=${SVM_REPO:-$(cd "$HERE/../.." && pwd)}
# shellcheck source=tests/vm/lib.sh
. "$HERE/lib.sh"
# shellcheck source=tests/vm/pair.sh
. "$HERE/pair.sh"
# a round trip between two TCG guests takes ~25 ms: the 4 KiB queue-depth-1
# job moves 1 MiB here
ULP_QD1_MB=${ULP_QD1_MB:-1}
# shellcheck source=tests/vm/storage.sh
. "$HERE/storage.sh"

TARGET_IP=$(ip_of A)
# longer than nvme's keep-alive timeout (5 s) and the QP's retries: the
# target drops the controller and the host must reconnect
NVME_FLAP_DOWN=${NVME_FLAP_DOWN:-15}
# B's host half of a test may take ULP_TMO; A's waits in one test share
# one deadline TGT_WAIT after it starts, longer, and run_test bounds both
# sides beyond that (run_test scales its own bound on the debug kernel; the
# waits inside do not)
ULP_TMO=$(( (ULP_FULL || ULP_SIZE_MB > 16 ? 1800 : 480) * DBG_SCALE))
TGT_WAIT=$((ULP_TMO + 120 * DBG_SCALE))
TGT_END=0
tgt_deadline() { TGT_END=$(($(date +%s) + TGT_WAIT)); }
tgt_left() { # seconds to A's deadline, at least 1
	local l=$((TGT_END - $(date +%s)))
	echo $((l > 1 ? l : 1))
}
wait_peer_any() { # SECS KEY...: the first of the keys the peer posts (or none)
	local secs=$1 end k
	shift
	end=$((SECONDS + secs))
	while ((SECONDS < end)); do
		for k; do
			[[ -e $SYNC/in/$k ]] && { echo "$k"; return 0; }
		done
		peer_gone && return 1
		nap 0.3
	done
	return 1
}

setup() {
	echo "side $ME ($([[ $ME == A ]] && echo target || echo host)): driver $DRV on $(uname -r); peer $PEER: $(drv_of "$PEER") on $(kver_of "$PEER"); config ${IOP_CONFIG:-?}; size ${ULP_SIZE_MB}M"
	install_module
	"$MODPROBE" "$MOD"
	ensure_link
	"$RDMA" link show
	info "RoCE v2 IPv4 GID index $GIDX"
	wait_for 60 ping1 "$(ip_of "$PEER")" || fail "peer $(ip_of "$PEER") does not answer ping"
}

# --- the halves ----------------------------------------------------------------
# A (target): UP... sets up, its output in /tmp/ulp-handoff goes to B with
# NAME.ready; then wait for B's NAME.done and run DOWN. A failing UP still
# releases B (NAME.ready says FAIL).
target_half() { # NAME MIN_SENT DOWN UP...
	local name=$1 min=$2 down=$3
	shift 3
	tgt_deadline
	: >/tmp/ulp-handoff
	cnt_begin
	# shellcheck disable=SC2064
	trap "post $name.ready FAIL; $down" EXIT
	"$@"
	trap - EXIT
	post "$name.ready" "$(cat /tmp/ulp-handoff)"
	wait_peer "$name.done" "$(tgt_left)" || { $down; fail "host did not finish $name within ${TGT_WAIT}s"; }
	$down
	host_passed "$name"
	cnt_check "$min"
}
# B's verdict, which it posts in NAME.done (empty if B was killed)
host_passed() { # NAME
	[[ $(cat "$SYNC/in/$1.done" 2>/dev/null) == 0 ]] || fail "the host failed $1 (see B's log)"
}
# B (host): wait for A's target, run FN ARGS... (with the handoff in
# HANDOFF), then DOWN whatever happened, and tell A it is done.
host_half() { # NAME MIN_SENT DOWN FN ARGS...
	local name=$1 min=$2 down=$3 rc
	shift 3
	wait_peer "$name.ready" $((300 * DBG_SCALE)) || { post "$name.done"; fail "target not ready for $name"; }
	HANDOFF=$(cat "$SYNC/in/$name.ready")
	[[ $HANDOFF != FAIL ]] || { post "$name.done"; fail "target setup for $name failed (see A's log)"; }
	cnt_begin
	# killed at run_test's bound, still release A (TERM runs EXIT traps)
	# shellcheck disable=SC2064
	trap "post $name.done; $down" EXIT
	# a subshell in an && list would run without set -e
	set +e
	(set -e; "$@")
	rc=$?
	set -e
	# a failed host releases A before its own cleanup, which may hang on
	# a stuck controller; a cleanup that hangs still releases A
	# shellcheck disable=SC2064
	trap "post $name.done" EXIT
	((rc == 0)) || post "$name.done" "$rc"
	bounded $((90 * DBG_SCALE)) "$down"
	trap - EXIT
	((rc == 0)) || exit 1
	post "$name.done" 0
	cnt_check "$min"
}
t_nvme() {
	if [[ $ME == A ]]; then
		target_half nvme "$(pkts_for "$ULP_SIZE_MB")" nvmet_down nvmet_up "$TARGET_IP"
	else
		host_half nvme "$(pkts_for "$ULP_SIZE_MB")" nvme_host_down nvme_host_run "$TARGET_IP"
	fi
}

# A fio verify job slowed to about 20 s of writing (SLOW_KBS KiB/s in
# 64 KiB writes), so that the link can go down in the middle of it.
SLOW_KBS=$((ULP_SIZE_MB * 1024 / 20))
fio_slow_verify() { # DEV NAME
	fio --name="$2" --filename="$1" --direct=1 --ioengine=libaio --rw=write --bs=64k \
		--iodepth=8 --size="${ULP_SIZE_MB}M" --rate="${SLOW_KBS}k" --verify=crc32c --verify_fatal=1 \
		--do_verify=1 --output="/tmp/fio-$2.txt"
}

# A hung I/O path: the blocked tasks' stacks, from sysrq into the kernel
# log, saved next to the test's log at once (the console's log level hides
# them, and a guest stuck for good is killed before suite_end saves dmesg).
fail_blocked() { # MESSAGE
	local dump=${_T_REASON_FILE%.reason}.dmesg
	echo w >/proc/sysrq-trigger 2>/dev/null || true
	sleep 1
	dmesg >"$dump" 2>/dev/null || true
	fail "$1 (blocked tasks' stacks in ${dump##*/})"
}
# CMD... in the background for at most SECS: a process stuck in the kernel
# is left behind, not waited for (timeout(1) would wait for it).
bounded() { # SECS CMD...
	local secs=$1 p
	shift
	"$@" &
	p=$!
	wait_for "$secs" bash -c "! kill -0 $p" || fail_blocked "'$*' still running after ${secs}s"
	wait "$p"
}

# Connect to A's subsystem (nvme connect's --ctrl-loss-tmo CTRL_LOSS) and
# start fio_slow_verify on it as job NAME; FIO_PID is the job, still
# running after SECS.
FIO_PID=
slow_io_start() { # NAME CTRL_LOSS SECS
	"$MODPROBE" nvme-rdma || fail "modprobe nvme-rdma"
	nvme_connect "$TARGET_IP" --reconnect-delay=2 --ctrl-loss-tmo="$2"
	fio_slow_verify "$(nvme_ns_dev)" "$1" &
	FIO_PID=$!
	sleep "$3"
	kill -0 "$FIO_PID" 2>/dev/null || fail "fio $1 ended within ${3}s: $(cat "/tmp/fio-$1.txt")"
}

# the link back up whatever happened, then the host's controllers
flap_host_down() {
	"$IP" link set "$NETDEV" up 2>/dev/null || true
	nvme_host_down
}
nvme_flap_host() {
	local pid rc mark=flap-$$ t0
	dmesg_mark "$mark"
	slow_io_start flap 600 4
	pid=$FIO_PID
	info "[$(now)] $NETDEV down for ${NVME_FLAP_DOWN}s"
	"$IP" link set "$NETDEV" down
	sleep "$NVME_FLAP_DOWN"
	"$IP" link set "$NETDEV" up || fail "ip link set $NETDEV up failed"
	info "[$(now)] $NETDEV up"
	t0=$(date +%s)
	wait_for $((240 * DBG_SCALE)) bash -c "! kill -0 $pid" || fail_blocked "fio still running $((240 * DBG_SCALE))s after the link came back"
	wait "$pid" && rc=0 || rc=$?
	grep -E 'err=|WRITE:|READ:' /tmp/fio-flap.txt | sed 's/^/    /' || true
	((rc == 0)) || { cat /tmp/fio-flap.txt; fail "fio across the link flap exited $rc"; }
	grep -q 'err= 0' /tmp/fio-flap.txt || fail "fio across the link flap reported an error"
	info "fio ended $(($(date +%s) - t0))s after the link came back, every block verified"
	dmesg_since "$mark" | grep -E "nvme.*(reconnect|Reconnect|error recovery)" | sed 's/^/    /' | tail -n4 || true
	dmesg_since "$mark" | grep -E "nvme.*Successfully reconnected" >/dev/null || fail "no 'Successfully reconnected' from nvme in dmesg"
	bounded 60 nvme disconnect -n "$NQN" >/dev/null
}
t_nvme_flap() {
	if [[ $ME == A ]]; then
		target_half nvme_flap "$(pkts_for "$ULP_SIZE_MB")" nvmet_down nvmet_up "$TARGET_IP"
	else
		host_half nvme_flap "$(pkts_for "$ULP_SIZE_MB")" flap_host_down nvme_flap_host
		wait_for 30 ping1 "$TARGET_IP" || fail "the target does not answer ping after the flap"
	fi
}

nvme_gone_host() {
	local pid rc t0 secs bound=$((120 * DBG_SCALE))
	slow_io_start gone 10 3
	pid=$FIO_PID
	post nvme_gone.running
	wait_peer nvme_gone.removed $((120 * DBG_SCALE)) || fail "the target did not go away"
	[[ $(cat "$SYNC/in/nvme_gone.removed") != FAIL ]] || fail "the target's teardown failed (see A's log)"
	t0=$(date +%s)
	wait_for "$bound" bash -c "! kill -0 $pid" || fail_blocked "fio still running ${bound}s after the target went away (hung I/O)"
	wait "$pid" && rc=0 || rc=$?
	secs=$(($(date +%s) - t0))
	grep -E 'err=|WRITE:|READ:|error' /tmp/fio-gone.txt | head -n5 | sed 's/^/    /' || true
	((rc != 0)) || fail "fio succeeded although its target went away"
	info "fio failed with exit $rc ${secs}s after the target went away"
	if wait_for 60 nvme_ctrl_gone; then
		info "the controller went away by itself (ctrl-loss-tmo)"
	else
		bounded 60 nvme disconnect -n "$NQN" || fail "the controller neither went away nor disconnects"
	fi
	! nvme_ns_dev >/dev/null || fail "namespace still present"
}
nvme_ctrl_gone() { ! nvme_ctrl_of_nqn; }
t_nvme_target_gone() {
	# fio ran 3 s before A removes the target (startup under TCG takes
	# some): a second of its 64 KiB writes at least, one RDMA READ from A
	# each, their bytes from B
	local a_min=$((SLOW_KBS / 64)) b_min
	if [[ $ME == A ]]; then
		tgt_deadline
		cnt_begin
		# shellcheck disable=SC2064
		trap "post nvme_gone.ready FAIL; nvmet_down" EXIT
		nvmet_up "$TARGET_IP"
		trap - EXIT
		post nvme_gone.ready
		[[ $(wait_peer_any "$(tgt_left)" nvme_gone.running nvme_gone.done) == nvme_gone.running ]] ||
			{ nvmet_down; fail "the host never started its I/O (see B's log)"; }
		info "[$(now)] removing the port and the subsystem under the host's I/O"
		# shellcheck disable=SC2064
		trap "post nvme_gone.removed FAIL; nvmet_down" EXIT
		nvmet_teardown
		[[ ! -d $NVMET/ports/1 ]] || fail "port 1 still there after the teardown"
		trap - EXIT
		post nvme_gone.removed
		wait_peer nvme_gone.done "$(tgt_left)" || { nvmet_down; fail "host did not finish within ${TGT_WAIT}s"; }
		nvmet_down
		host_passed nvme_gone
		cnt_check "$a_min"
	else
		b_min=$(pkts_for 1)
		b_min=$((b_min * SLOW_KBS / 1024))
		host_half nvme_gone "$b_min" nvme_host_down nvme_gone_host
	fi
}

# B writes and checks over the mount; A then checks its own copy against
# B's sums; B remounts and reads everything back.
t_nfs() {
	local rc
	if [[ $ME == A ]]; then
		tgt_deadline
		cnt_begin
		# shellcheck disable=SC2064
		trap "post nfs.ready FAIL; nfs_server_down" EXIT
		nfs_server_up
		trap - EXIT
		post nfs.ready
		[[ $(wait_peer_any "$(tgt_left)" nfs.written nfs.done) == nfs.written ]] ||
			{ nfs_server_down; fail "the client did not write (see B's log)"; }
		sed '$d' "$SYNC/in/nfs.written" >/tmp/nfs-src.sums
		set +e
		(set -e; nfs_server_check /tmp/nfs-src.sums "$(tail -n1 "$SYNC/in/nfs.written")")
		rc=$?
		set -e
		post nfs.checked "$rc"
		wait_peer nfs.done "$(tgt_left)" || { nfs_server_down; fail "client did not finish within ${TGT_WAIT}s"; }
		nfs_server_down
		((rc == 0)) || exit 1
		host_passed nfs
		# the O_DIRECT re-read of big, as RDMA WRITEs
		cnt_check "$(pkts_for "$NFS_BIG_MB")"
	else
		host_half nfs "$(pkts_for "$NFS_BIG_MB")" nfs_client_down nfs_host
	fi
}
nfs_host() {
	nfs_client_write "$TARGET_IP"
	post nfs.written "$(cat /tmp/nfs-src.sums /tmp/nfs-big.sum)"
	wait_peer nfs.checked "$ULP_TMO" || fail "the server never checked its copy"
	[[ $(cat "$SYNC/in/nfs.checked") == 0 ]] || fail "the server's copy differs (see A's log)"
	nfs_client_reread "$TARGET_IP"
}

t_iser() {
	if [[ $ME == A ]]; then
		target_half iser "$(pkts_for "$ULP_SIZE_MB")" iser_target_down iser_target_up "$TARGET_IP"
	else
		host_half iser "$(pkts_for "$ULP_SIZE_MB")" iser_host_down iser_host_run "$TARGET_IP"
	fi
}

# The ACL names B's initiator port ID, which B posts first.
srpt_handoff() {
	local iport
	wait_peer srp.iport "$(tgt_left)" || fail "the host never posted its SRP initiator port ID"
	iport=$(cat "$SYNC/in/srp.iport")
	[[ $iport =~ ^0x[0-9a-f]{32}$ ]] || fail "the host's SRP initiator port ID '$iport' is not 0x and 32 hex digits"
	srpt_up "$iport"
	echo "$SRP_SGUID" >/tmp/ulp-handoff
}
srp_host() { srp_host_run "$TARGET_IP" "$HANDOFF"; }
t_srp() {
	if [[ $ME == A ]]; then
		target_half srp "$(pkts_for "$ULP_SIZE_MB")" srpt_down srpt_handoff
	else
		post srp.iport "$(srp_initiator_port_id)"
		host_half srp "$(pkts_for "$ULP_SIZE_MB")" srp_logout srp_host
	fi
}

# --- the suite ---------------------------------------------------------------------
SUITE_PREFIX=
suite_begin "ulp-pair(${IOP_CONFIG:-?}:$ME=$DRV)"
pair_setup setup || { suite_end; exit 1; }
for t in nvme nvme_flap nvme_target_gone nfs iser srp; do
	[[ -n ${IOP_ONLY:-} && ! $t =~ $IOP_ONLY ]] && continue
	if [[ $t == nvme_flap && $(drv_of B) == rxe && ${ULP_RXE_FLAP:-0} != 1 ]]; then
		_record "SKIP ${_SUITE}$t: rdma_rxe as the host does not recover from its own link going down: in rxe-rxe (6.12) nvme-rdma's reconnects stop once rxe0 is active again and nvme disconnect blocks (Documentation/interop.md; ULP_RXE_FLAP=1 runs it)"
		continue
	fi
	# a subsystem of its own per test: a host left connected by a failed
	# test must not find the next test's fresh disk under the same name
	NQN=nqn.2026-12.io.sroce:ulp-pair-${t//_/-}
	run_test "$t" $((TGT_WAIT / DBG_SCALE + 120)) "t_$t"
done
post end
wait_peer end 300 || echo "peer did not reach the end within 300s"
suite_end
