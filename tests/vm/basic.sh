#!/bin/bash
# Basic suite for a soft-RoCE device, run INSIDE the test VM (see tests/vm/run-suite).
#
# Parameterised so the same tests run against the kernel's rdma_rxe:
#   SROCE_DRV=sroce (default): module sroce (from $SROCE_KO, default
#                              <repo>/build/modules/$(uname -r)/sroce.ko if present, else <repo>/sroce.ko,
#                              installed into /lib/modules/$(uname -r)/extra + depmod),
#                              rdma link type "sroce", device sroce0
#   SROCE_DRV=rxe:             module rdma_rxe, link type "rxe", device rxe0
# SROCE_NETDEV (default eth0) is the netdev the device is bound to.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=${SVM_REPO:-$(cd "$HERE/../.." && pwd)}
# shellcheck source=tests/vm/lib.sh
. "$HERE/lib.sh"

SROCE_DRV=${SROCE_DRV:-sroce}
NETDEV=${SROCE_NETDEV:-eth0}
select_driver "$SROCE_DRV"
# Fast paths under TCG: small, bounded iteration counts.
PP_ITERS=${PP_ITERS:-50}
PERF_ITERS=${PERF_ITERS:-20}

# ---------------------------------------------------------------------------
setup() {
	install_module
	mod_loaded && "$MODPROBE" -r "$MOD"
	modinfo -F filename "$MOD"
	"$IP" -br addr show dev "$NETDEV"
	[[ $("$IP" -4 -o addr show dev "$NETDEV") ]] || fail "$NETDEV has no IPv4 address"
}

t_load_unload() {
	local i
	for i in 1 2 3; do
		"$MODPROBE" "$MOD"
		mod_loaded || fail "round $i: $MOD not loaded after modprobe"
		# packets through lo are refused unless root says otherwise
		if [[ $SROCE_DRV == sroce && $i == 1 ]]; then
			[[ $(cat "/sys/module/$MOD/parameters/lo_rx") == N ]] ||
				fail "lo_rx is $(cat "/sys/module/$MOD/parameters/lo_rx") after a plain modprobe, want N"
		fi
		"$MODPROBE" -r "$MOD"
		! mod_loaded || fail "round $i: $MOD still loaded after modprobe -r"
		info "round $i ok"
	done
	assert_dmesg_clean "test load_unload"
}

t_link_add_delete() {
	local i
	for i in 1 2 3; do
		# First round relies on the rdma-link-$LTYPE alias to auto-load the module.
		"$RDMA" link add "$DEV" type "$LTYPE" netdev "$NETDEV"
		"$RDMA" link show
		link_present || fail "round $i: 'rdma link show' has no $DEV/1 -> $NETDEV"
		[[ -d $(ib_dir) ]] || fail "round $i: $(ib_dir) missing"
		"$RDMA" link delete "$DEV"
		! link_present || fail "round $i: $DEV still shown after delete"
		wait_for 10 test ! -e "$(ib_dir)" || fail "round $i: $(ib_dir) still there after delete"
		info "round $i ok"
	done
	ensure_link
	"$RDMA" link show
	assert_dmesg_clean "test link_add_delete"
}

t_devinfo() {
	local out gidx want
	ensure_link
	ibv_devices | tee /tmp/devices.txt
	grep -qE "^[[:space:]]+$DEV[[:space:]]" /tmp/devices.txt || fail "ibv_devices does not list $DEV"
	out=$(ibv_devinfo -v -d "$DEV") || fail "ibv_devinfo -v -d $DEV failed"
	echo "$out" | grep -vE '^\s+GID\[' | head -n 60
	echo "$out" | grep -E 'GID\['
	echo "$out" | grep -qE 'state:[[:space:]]+PORT_ACTIVE' || fail "port not PORT_ACTIVE"
	want=$(expected_gid)
	gidx=$(roce_v2_gid_index) || fail "no RoCE v2 GID $want in sysfs"
	info "RoCE v2 IPv4 GID index $gidx ($want)"
	# ibv_devinfo -v prints e.g. "GID[  1]:  ::ffff:10.0.0.1, RoCE v2"
	local ip4
	ip4=$("$IP" -4 -o addr show dev "$NETDEV" | awk '{ print $4 }' | cut -d/ -f1 | head -n1)
	echo "$out" | grep -qE "GID\[ *$gidx\]:.*(::ffff:$ip4|$want).*RoCE v2" ||
		fail "ibv_devinfo -v does not show GID[$gidx] ::ffff:$ip4 RoCE v2"
}

_port=18600
next_port() { _port=$((_port + 1)); }

pingpong() { # size [iters [server_gid_index client_gid_index]]
	local n=$1 iters=${2:-$PP_ITERS} sg=${3:-} cg=${4:-} spid out
	ensure_link
	[[ -n $sg ]] || { sg=$(roce_v2_gid_index); cg=$sg; }
	next_port
	ibv_rc_pingpong -d "$DEV" -g "$sg" -c -s "$n" -n "$iters" -p "$_port" >/tmp/pp-srv.txt 2>&1 &
	spid=$!
	wait_port "$_port" 30 || { cat /tmp/pp-srv.txt; fail "pingpong server did not listen"; }
	out=$(timeout 120 ibv_rc_pingpong -d "$DEV" -g "$cg" -c -s "$n" -n "$iters" -p "$_port" 127.0.0.1 2>&1) ||
		{ echo "$out"; echo "--- server:"; cat /tmp/pp-srv.txt; fail "ibv_rc_pingpong client -s $n failed"; }
	echo "client: $out"
	wait_for 60 bash -c "! kill -0 $spid" || fail "pingpong server did not finish"
	wait "$spid" || { cat /tmp/pp-srv.txt; "$RDMA" statistic show link "$DEV/1" || true; fail "ibv_rc_pingpong server -s $n exited non-zero: $(grep -i fail /tmp/pp-srv.txt | head -n1)"; }
	echo "server: $(cat /tmp/pp-srv.txt)"
	echo "$out" | grep -qE "^$iters iters in" || fail "client did not report $iters iters"
	grep -qE "^$iters iters in" /tmp/pp-srv.txt || fail "server did not report $iters iters"
}
port_state_is() { grep -q "$1" "$(ib_dir)/ports/1/state"; }
active_mtu_is() { ibv_devinfo -d "$DEV" | grep -qE "active_mtu:[[:space:]]+$1 "; }
gid_present() { grep -qx "$1" "$(ib_dir)"/ports/1/gids/* 2>/dev/null; }
gid_absent() { ! gid_present "$1"; }

# Port state and MTU follow the netdev; the GID table follows its addresses.
t_port_netdev() {
	local gid=0000:0000:0000:0000:0000:ffff:0a63:0063
	ensure_link
	port_state_is ACTIVE || fail "port not ACTIVE at start"
	"$IP" link set "$NETDEV" down
	wait_for 10 port_state_is DOWN || fail "port not DOWN after link down: $(cat "$(ib_dir)/ports/1/state")"
	"$IP" link set "$NETDEV" up
	wait_for 20 port_state_is ACTIVE || fail "port not ACTIVE after link up"
	"$IP" link set "$NETDEV" mtu 9000
	wait_for 10 active_mtu_is 4096 || fail "active_mtu not 4096 at netdev MTU 9000"
	"$IP" link set "$NETDEV" mtu 1500
	wait_for 10 active_mtu_is 1024 || fail "active_mtu not 1024 at netdev MTU 1500"
	# the path MTU rdma_cm picks for a RoCE netdev (iboe_get_mtu: 96 bytes
	# of headers), so that both ends of a connection agree
	if [[ $SROCE_DRV == sroce ]]; then
		"$IP" link set "$NETDEV" mtu 4191
		wait_for 10 active_mtu_is 2048 || fail "active_mtu not 2048 at netdev MTU 4191"
	fi
	"$IP" link set "$NETDEV" mtu 4192
	wait_for 10 active_mtu_is 4096 || fail "active_mtu not 4096 at netdev MTU 4192"
	"$IP" link set "$NETDEV" mtu 1500
	wait_for 10 active_mtu_is 1024 || fail "active_mtu not 1024 at netdev MTU 1500"
	"$IP" addr add 10.99.0.99/32 dev "$NETDEV"
	wait_for 20 gid_present "$gid" || fail "no GID $gid after adding 10.99.0.99"
	"$IP" addr del 10.99.0.99/32 dev "$NETDEV"
	wait_for 20 gid_absent "$gid" || fail "GID $gid still there after removing the address"
	wait_for 20 roce_v2_gid_index >/dev/null || fail "lost the eth0 GID"
	assert_dmesg_clean "test port_netdev"
}

# sroce and rdma_rxe share a driver id and UDP 4791: each refuses the other.
t_rxe_exclusion() {
	[[ $SROCE_DRV == sroce ]] || { info "sroce only"; return 0; }
	"$RDMA" link delete "$DEV" 2>/dev/null || true
	! mod_loaded || "$MODPROBE" -r "$MOD"
	"$MODPROBE" crc32_generic 2>/dev/null
	"$MODPROBE" rdma_rxe || fail "cannot load rdma_rxe for the test"
	# what a user sees, for Documentation/troubleshooting.md
	mkdir -p "$RESULTS/symptoms"
	exec 3>"$RESULTS/symptoms/rxe_loaded.txt"
	echo "# modprobe sroce with rdma_rxe loaded" >&3
	if "$MODPROBE" "$MOD" 2>&3; then
		fail "sroce loaded while rdma_rxe is loaded"
	fi
	dmesg | tail -n 20 | grep "sroce: rdma_rxe is loaded" >&3 ||
		fail "no dmesg line explaining the refusal"
	"$MODPROBE" -r rdma_rxe || fail "cannot unload rdma_rxe"
	"$MODPROBE" "$MOD" || fail "sroce does not load after rdma_rxe left"
	echo "# modprobe rdma_rxe with sroce loaded" >&3
	if "$MODPROBE" rdma_rxe 2>&3; then
		"$MODPROBE" -r rdma_rxe
		fail "rdma_rxe loaded while sroce is loaded"
	fi
	dmesg | tail -n 20 | grep "rdma_rxe cannot load while sroce is loaded" >&3 ||
		fail "no dmesg line explaining why rdma_rxe was refused"
	exec 3>&-
	cat "$RESULTS/symptoms/rxe_loaded.txt"
	ensure_link
	assert_dmesg_clean "test rxe_exclusion"
}

t_pingpong_1() { pingpong 1; }
t_pingpong_1024() { pingpong 1024; }
t_pingpong_4096() { pingpong 4096; }
t_pingpong_65536() { pingpong 65536; }

# BW average from a perftest report (the "65536 <iters> <peak> <avg> <rate>" line).
perf_bw() { awk '$1 == 65536 && NF >= 5 { print $4 }' "$1" | tail -n1; }
perf_iters() { awk '$1 == 65536 && NF >= 5 { print $2 }' "$1" | tail -n1; }
nonzero() { awk -v b="$1" 'BEGIN { exit !(b + 0 > 0) }'; }

perftest_bw() { # ib_send_bw|ib_write_bw|ib_read_bw (not "perf": that is the profiler)
	local tool=$1 gidx spid cbw sbw try
	ensure_link
	gidx=$(roce_v2_gid_index)
	for try in 1 2 3 4 5; do
		next_port
		local args=(-d "$DEV" -x "$gidx" -s 65536 -n "$PERF_ITERS" -F -p "$_port")
		"$tool" "${args[@]}" >/tmp/perf-srv.txt 2>&1 &
		spid=$!
		wait_port "$_port" 30 || { cat /tmp/perf-srv.txt; fail "$tool server did not listen"; }
		timeout 180 "$tool" "${args[@]}" 127.0.0.1 >/tmp/perf-cli.txt 2>&1 ||
			{ cat /tmp/perf-cli.txt; echo "--- server:"; cat /tmp/perf-srv.txt; fail "$tool client failed"; }
		cat /tmp/perf-cli.txt
		wait_for 60 bash -c "! kill -0 $spid" || fail "$tool server did not finish"
		wait "$spid" || { cat /tmp/perf-srv.txt; fail "$tool server exited non-zero"; }
		echo "--- server:"
		grep -A1 '#bytes' /tmp/perf-srv.txt || true
		cbw=$(perf_bw /tmp/perf-cli.txt)
		sbw=$(perf_bw /tmp/perf-srv.txt)
		[[ -n $cbw ]] || fail "$tool: no result line"
		if nonzero "$cbw" || nonzero "${sbw:-0}"; then
			info "$tool: BW average client ${cbw} MB/s, server ${sbw:-n/a} MB/s"
			return 0
		fi
		# perftest reports 0 when its TSC-vs-wallclock calibration is too noisy
		# (r^2 < 0.9), which happens under TCG on a loaded host. That is a
		# measurement artefact, not a data-path failure: retry.
		if grep -q 'Correlation coefficient' /tmp/perf-cli.txt /tmp/perf-srv.txt; then
			info "$tool: BW 0 with a failed CPU-clock calibration (attempt $try); retrying"
			continue
		fi
		fail "$tool: BW average is $cbw (server ${sbw:-n/a})"
	done
	# Every attempt got here through a failed clock fit (any other zero has
	# failed above).  The KASAN/lockdep debug kernel is too slow for the fit
	# ever to succeed, and a busy TCG host can defeat it five times in a row
	# (seen in CI: r^2 0.69-0.87): then the assertion is that every
	# iteration ran on both sides, which the data path alone decides.
	if [[ $(perf_iters /tmp/perf-cli.txt) == "$PERF_ITERS" ]] &&
		[[ $(perf_iters /tmp/perf-srv.txt) =~ ^($PERF_ITERS)?$ ]]; then
		info "$tool: BW not measurable (clock calibration failed 5 times), all $PERF_ITERS iterations ran"
		return 0
	fi
	fail "$tool: BW average stayed 0 over 5 attempts and not all $PERF_ITERS iterations ran"
}
t_send_bw() { perftest_bw ib_send_bw; }
t_write_bw() { perftest_bw ib_write_bw; }
t_read_bw() { perftest_bw ib_read_bw; }

t_rmmod_busy() {
	local gidx spid rc
	ensure_link
	gidx=$(roce_v2_gid_index)
	next_port
	# A server that has opened the device and created its QP, waiting for a peer.
	ibv_rc_pingpong -d "$DEV" -g "$gidx" -p "$_port" >/tmp/busy-srv.txt 2>&1 &
	spid=$!
	wait_port "$_port" 30 || { cat /tmp/busy-srv.txt; fail "server did not listen"; }
	rc=0
	timeout 60 "$MODPROBE" -r "$MOD" || rc=$?
	if ((rc == 124)); then
		fail "modprobe -r hung with a user QP open"
	elif ((rc == 0)); then
		! mod_loaded || fail "modprobe -r succeeded but $MOD is still loaded"
		info "modprobe -r with a live QP succeeded (device removed under the user)"
	else
		mod_loaded || fail "modprobe -r failed (rc $rc) yet $MOD is gone"
		info "modprobe -r refused while in use (rc $rc), as allowed"
	fi
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	cat /tmp/busy-srv.txt
	if mod_loaded; then
		wait_for 30 "$MODPROBE" -r "$MOD" || fail "cannot remove $MOD after the user exited"
	fi
	! mod_loaded || fail "$MOD still loaded"
	[[ ! -e $(ib_dir) ]] || fail "$(ib_dir) still exists after module removal"
	assert_dmesg_clean "test rmmod_busy"
}

# The ACK of a message comes back after the local ACK timer (100 ms floor)
# went back to send it again: that ACK must complete it. 80 ms of netem
# delay on each end of the netns veth pair (netns_up) makes every round
# trip longer than the timer; the client exits as soon as it has the
# server's last message, so the server's last SEND completes only from
# the ACK of its first transmission (nothing answers the resent packets).
t_pingpong_late_ack() {
	local before after
	netns_can_run
	trap netns_down EXIT
	netns_up
	ns "$NSA" "$TC" qdisc add dev vna root netem delay 80ms || fail "cannot add netem to vna"
	ns "$NSB" "$TC" qdisc add dev vnb root netem delay 80ms || fail "cannot add netem to vnb"
	before=$(($(dcount sna retry_timeout) + $(dcount snb retry_timeout)))
	ns_pingpong ibv_rc_pingpong 65536 5
	after=$(($(dcount sna retry_timeout) + $(dcount snb retry_timeout)))
	# the case under test happened: the timer went back before the ACKs came
	((after > before)) || fail "the ACK timer never fired: the delay did not outlast it"
	info "ACK timeouts: $((after - before))"
	netns_down
	assert_dmesg_clean "test pingpong_late_ack"
}

# ---------------------------------------------------------------------------
# RC data integrity and recovery in loopback: tests/traffic/rc_verify checks
# every byte and every completion; the error cases check the WC status, that
# every other WQE is flushed once, and (sroce) the counter that explains it.
RCV=${RCV_BIN:-$REPO/build/traffic/rc_verify}
rcv_bin() { # the host's build, unless it is older than the source
	[[ -x $RCV && $RCV -nt $REPO/tests/traffic/rc_verify.c ]] && return 0
	RCV=/tmp/rc_verify
	[[ -x $RCV ]] || gcc -O2 -o "$RCV" "$REPO/tests/traffic/rc_verify.c" -libverbs ||
		fail "cannot build rc_verify"
}
# rcv_pair "server args" "client args": a loopback pair; both must say OK.
rcv_pair() {
	local sargs=$1 cargs=$2 spid gidx
	ensure_link
	rcv_bin
	gidx=$(roce_v2_gid_index)
	next_port
	# shellcheck disable=SC2086
	"$RCV" -s -d "$DEV" -x "$gidx" -p "$_port" -t 120 $sargs >/tmp/rcv-srv.txt 2>&1 &
	spid=$!
	wait_port "$_port" 30 || { cat /tmp/rcv-srv.txt; fail "rc_verify server did not listen"; }
	# shellcheck disable=SC2086
	timeout 400 "$RCV" -c 127.0.0.1 -d "$DEV" -x "$gidx" -p "$_port" -t 120 $cargs \
		>/tmp/rcv-cli.txt 2>&1 || { cat /tmp/rcv-cli.txt; echo "--- server:"; cat /tmp/rcv-srv.txt; "$RDMA" statistic show link "$DEV/1" || true; fail "rc_verify client: $(tail -n1 /tmp/rcv-cli.txt)"; }
	wait_for 60 bash -c "! kill -0 $spid" || fail "rc_verify server did not finish"
	wait "$spid" || { cat /tmp/rcv-srv.txt; fail "rc_verify server: $(tail -n1 /tmp/rcv-srv.txt)"; }
	cat /tmp/rcv-cli.txt
	"$RDMA" statistic show link "$DEV/1" || true
	grep -q '^rc_verify: OK' /tmp/rcv-cli.txt || fail "client printed no OK line"
	grep -q '^rc_verify: OK' /tmp/rcv-srv.txt || fail "server printed no OK line"
}
# Every op, 1 B to 4 MiB (16 times the 256-packet PSN window), 16 outstanding.
t_rc_verify() {
	rcv_pair "" ""
	assert_dmesg_clean "test rc_verify"
}
# SEND and WRITE gathered from scattered SGEs (rc_verify -G: each piece a
# copy in a page of its own), every byte checked by the server.  sroce puts
# a loopback RC payload into the packet as references to the user pages
# (loopback_zcopy_pkts) when it fits in the skb's fragments (17 on Debian's
# kernels, one for the trailer), and copies a payload of more pieces: -G 4
# must take the first way, -G 32 with 1000 and 1024 B messages (31-32 B
# pieces, one 1024 B packet each) the second.  A payload under 512 B
# (SROCE_ZCOPY_MIN) is copied too: 1, 63 and 511 B messages move nothing.
# READ responses reference the responder's MR the same way: the client
# checks every byte it read.  The whole packets of a message or READ
# response before its last go in trains (loopback_trains: one skb for
# 2-16 of them): the 4096, 4608 and 65536 B messages and READs must have
# used them, the one-packet and copied ones cannot.
rcv_ok_field() { sed -n "s/^rc_verify: OK.* $1=\([0-9]*\).*/\1/p" /tmp/rcv-cli.txt; }
t_rc_verify_gather() {
	local z0 z1 z2 z3 z4 bytes ops ops3 rbytes t0 t1 t3 t4
	ensure_link
	z0=$(counter loopback_zcopy_pkts)
	t0=$(counter loopback_trains)
	# every data packet carries at least 512 B (SROCE_ZCOPY_MIN)
	rcv_pair "-m 1024" "-m 1024 -o send,write,writeimm -S 512,1023,4096,4608,65536 -G 4"
	bytes=$(rcv_ok_field bytes)
	z1=$(counter loopback_zcopy_pkts)
	t1=$(counter loopback_trains)
	rcv_pair "-m 1024" "-m 1024 -o send,write,writeimm -S 1000,1024 -G 32"
	ops=$(rcv_ok_field ops)
	z2=$(counter loopback_zcopy_pkts)
	rcv_pair "-m 1024" "-m 1024 -o send,write,writeimm -S 1,63,511 -G 4"
	ops3=$(rcv_ok_field ops)
	z3=$(counter loopback_zcopy_pkts)
	t3=$(counter loopback_trains)
	rcv_pair "-m 1024" "-m 1024 -o read -S 512,1023,4096,65536"
	rbytes=$(rcv_ok_field bytes)
	z4=$(counter loopback_zcopy_pkts)
	t4=$(counter loopback_trains)
	info "-G 4: $bytes bytes, loopback_zcopy_pkts +$((z1 - z0)), loopback_trains +$((t1 - t0)); -G 32: $ops WQEs, +$((z2 - z1)); under 512 B: $ops3 WQEs, +$((z3 - z2)); READ: $rbytes bytes, +$((z4 - z3)); trains +$((t3 - t1)) in the one-packet runs, +$((t4 - t3)) in READ"
	if [[ $SROCE_DRV == sroce ]]; then
		# every data packet went by reference
		(((z1 - z0) * 1024 >= bytes)) || fail "-G 4: only $((z1 - z0)) packets by reference for $bytes bytes"
		# most in trains: a 64 KiB message is 4 trains (a few more if a
		# pass's budget splits one) and its last packet
		(((t1 - t0) > 0 && (t1 - t0) * 8 < (z1 - z0))) || fail "-G 4: loopback_trains +$((t1 - t0)) for $((z1 - z0)) packets by reference"
		# one-packet messages never go in trains, READ responses do
		((t3 == t1)) || fail "loopback_trains moved by $((t3 - t1)) with one-packet messages only"
		(((t4 - t3) > 0 && (t4 - t3) * 8 < (z4 - z3))) || fail "READ: loopback_trains +$((t4 - t3)) for $((z4 - z3)) responses by reference"
		# the data packets were copied (the control messages, under 512 B, are too)
		(((z2 - z1) * 2 < ops)) || fail "-G 32: $((z2 - z1)) packets by reference for $ops one-packet WQEs of 31-32 pieces"
		# a small payload is cheaper to copy than to reference
		((z3 == z2)) || fail "payloads under 512 B: $((z3 - z2)) packets by reference"
		# every READ response packet went by reference
		(((z4 - z3) * 1024 >= rbytes)) || fail "READ: only $((z4 - z3)) response packets by reference for $rbytes bytes"
	fi
	assert_dmesg_clean "test rc_verify_gather"
}
# `rdma -dd resource show qp|mr|cq` (sroce's restrack details, which the
# rdma tool prints with a drv_ prefix), sampled
# every 0.3 s into /tmp/res-*.txt while a test's traffic runs.
res_sample_start() {
	rm -f /tmp/res-qp.txt /tmp/res-mr.txt /tmp/res-cq.txt
	(while :; do
		"$RDMA" -dd resource show qp >>/tmp/res-qp.txt 2>&1
		"$RDMA" -dd resource show mr >>/tmp/res-mr.txt 2>&1
		"$RDMA" -dd resource show cq >>/tmp/res-cq.txt 2>&1
		sleep 0.3
	done) &
	_res_pid=$!
}
res_sample_stop() { kill "$_res_pid" 2>/dev/null; wait "$_res_pid" 2>/dev/null || true; }
# The largest value of driver detail NAME in a sample FILE (0 if none).
res_max() { # FILE NAME
	awk -v n="$2" '{ for (i = 1; i < NF; i++) if ($i == n && $(i + 1) + 0 > m) m = $(i + 1) + 0 } END { print m + 0 }' "$1"
}
# Receives posted 300 ms late: RNR NAKs, infinite rnr_retry, data still exact.
# sroce: the device counter and the QPs' own (restrack) counts both say so.
t_rc_verify_rnr_late() {
	local before d
	before=$(counter send_rnr_nak)
	[[ $SROCE_DRV == sroce ]] && res_sample_start
	rcv_pair "-L 300" "-o send,writeimm -S 1,4096,1048576 -R 7 -M 1"
	if [[ $SROCE_DRV == sroce ]]; then
		res_sample_stop
		(($(counter send_rnr_nak) > before)) || fail "no RNR NAK was sent (send_rnr_nak stayed $before)"
		info "RNR NAKs: $(($(counter send_rnr_nak) - before))"
		grep -m1 -oE 'drv_rnr_nak_sent [1-9][0-9]*' /tmp/res-qp.txt ||
			{ tail -n 20 /tmp/res-qp.txt; fail "no QP's rnr_nak_sent moved in rdma resource show qp -dd"; }
		grep -m1 -oE 'drv_rnr_nak_rcvd [1-9][0-9]*' /tmp/res-qp.txt ||
			fail "no QP's rnr_nak_rcvd moved in rdma resource show qp -dd"
		for d in sq_outstanding resp_rd_atomic_used retry_timeout tx_skbs cpu; do
			grep -qE "(^|[[:space:]])drv_$d [0-9]" /tmp/res-qp.txt ||
				{ tail -n 4 /tmp/res-qp.txt; fail "qp -dd has no $d"; }
		done
		# QPs are spread over the CPUs: each QP's worker runs on its cpu
		if (($(nproc) > 1)); then
			grep -oE 'drv_cpu [0-9]+' /tmp/res-qp.txt | sort -u >/tmp/res-cpus.txt
			(($(wc -l </tmp/res-cpus.txt) > 1)) ||
				fail "the QPs are not spread over the CPUs: $(tr '\n' ' ' </tmp/res-cpus.txt)"
		fi
		# rc_verify registers buffers of up to 1 MiB: pages behind them
		(($(res_max /tmp/res-mr.txt drv_npages) >= 256)) ||
			{ tail -n 5 /tmp/res-mr.txt; fail "no MR of 256+ pages in rdma resource show mr -dd"; }
		grep -qE "(^|[[:space:]])drv_cqe_queued [0-9]" /tmp/res-cq.txt ||
			{ tail -n 4 /tmp/res-cq.txt; fail "cq -dd has no cqe_queued"; }
	fi
	assert_dmesg_clean "test rc_verify_rnr_late"
}
# No receive is ever posted: rnr_retry 1 runs out into RNR_RETRY_EXC_ERR.
t_rc_verify_rnr_exhausted() {
	rcv_pair "-N" "-o send -S 4096 -R 1 -M 1 -E rnr_retry_exc -W 30"
	grep -q 'expected error' /tmp/rcv-cli.txt || fail "client did not report the expected error"
	assert_dmesg_clean "test rc_verify_rnr_exhausted"
}
# Tracepoints (events/sroce) and dynamic debug: every packet sent and received is one event
# with its BTH decoded, QPs' state changes and RNR waits show, and sroce's
# trace lines agree with its counters.
CPU1=/sys/devices/system/cpu/cpu1/online
one_cpu() { [[ ! -w $CPU1 ]] || echo 0 >"$CPU1"; }
all_cpus() { [[ ! -w $CPU1 ]] || echo 1 >"$CPU1"; }
t_trace() {
	[[ $SROCE_DRV == sroce ]] || { info "sroce only"; return 0; }
	local T=/sys/kernel/tracing DDC=/sys/kernel/debug/dynamic_debug/control tx0 rx0 ntx nrx dtx drx
	[[ -e $T/trace ]] || mount -t tracefs nodev "$T" || fail "no tracefs"
	ensure_link
	[[ -d $T/events/sroce ]] || fail "no events/sroce in tracefs"
	echo 0 >"$T/tracing_on"
	echo >"$T/trace"
	echo 4096 >"$T/buffer_size_kb"
	# Turning an event or a debug line on or off patches kernel text
	# (int3), which multi-threaded TCG races with the other vCPU running
	# it ("Oops: int3" in __schedule on 6.12): patch with one CPU online.
	one_cpu
	echo 1 >"$T/events/sroce/enable"
	# dynamic debug too: sroce's rate-limited ibdev_dbg lines
	[[ -w $DDC ]] && echo "module sroce +p" >"$DDC"
	all_cpus
	dmesg_mark trace-dbg
	tx0=$(counter sent_pkts)
	rx0=$(counter rcvd_pkts)
	echo 1 >"$T/tracing_on"
	rcv_pair "-L 300" "-o send -S 1,4096 -R 7 -M 1"
	echo 0 >"$T/tracing_on"
	dtx=$(($(counter sent_pkts) - tx0))
	drx=$(($(counter rcvd_pkts) - rx0))
	one_cpu
	echo 0 >"$T/events/sroce/enable"
	[[ -w $DDC ]] && echo "module sroce -p" >"$DDC"
	all_cpus
	cp "$T/trace" /tmp/trace.txt
	echo 1 >"$T/tracing_on"
	grep -m2 -E "sroce_pkt_tx: $DEV RC_SEND_ONLY\(0x4\) dqpn 0x[0-9a-f]+ psn" /tmp/trace.txt ||
		fail "no decoded RC_SEND_ONLY in sroce_pkt_tx"
	grep -m1 -E "sroce_pkt_rx: $DEV RC_ACKNOWLEDGE\(0x11\) .* aeth syndrome 0x[0-9a-f]+ msn [0-9]+" /tmp/trace.txt ||
		fail "no decoded ACK (AETH) in sroce_pkt_rx"
	grep -m1 -E "sroce_qp_state: qpn 0x[0-9a-f]+ RTR -> RTS" /tmp/trace.txt || fail "no RTR -> RTS in sroce_qp_state"
	grep -m1 -E "sroce_rnr_wait: qpn 0x[0-9a-f]+ psn 0x[0-9a-f]+ waits [0-9]+ us" /tmp/trace.txt ||
		fail "receives posted late, yet no sroce_rnr_wait"
	grep -q "entries-in-buffer/entries-written: \([0-9]*\)/\1 " /tmp/trace.txt ||
		{ grep entries-in-buffer /tmp/trace.txt; fail "the trace buffer overran"; }
	ntx=$(grep -c "sroce_pkt_tx:" /tmp/trace.txt || true)
	nrx=$(grep -c "sroce_pkt_rx:" /tmp/trace.txt || true)
	info "sent_pkts +$dtx, sroce_pkt_tx $ntx; rcvd_pkts +$drx, sroce_pkt_rx $nrx"
	((dtx > 0 && ntx == dtx)) || fail "sroce_pkt_tx events ($ntx) != sent_pkts delta ($dtx)"
	((drx > 0 && nrx == drx)) || fail "sroce_pkt_rx events ($nrx) != rcvd_pkts delta ($drx)"
	if [[ -w $DDC ]]; then
		dmesg_since trace-dbg | grep -m1 -E "$DEV: qp 0x[0-9a-f]+: no receive WQE for psn 0x[0-9a-f]+: RNR NAK" ||
			fail "module sroce +p, RNR NAKs sent, yet no debug line says so"
	elif [[ $(uname -r) != *-sroce-dbg ]]; then
		fail "no $DDC (Debian kernels have dynamic debug)"
	fi
	assert_dmesg_clean "test trace"
}
# The peer's QP vanishes: retry_cnt 2 runs out into RETRY_EXC_ERR, in bounded time.
t_rc_verify_peer_gone() {
	local before
	before=$(counter retry_timeout)
	rcv_pair "" "-K -o write -S 65536 -r 2 -T 14 -E retry_exc -W 30"
	if [[ $SROCE_DRV == sroce ]]; then
		(($(counter retry_timeout) >= before + 3)) ||
			fail "retry_timeout went from $before to $(counter retry_timeout), want +3 (2 retries + the last)"
	fi
	assert_dmesg_clean "test rc_verify_peer_gone"
}

# --- network namespaces ---------------------------------------------------
# Two namespaces joined by a veth pair, one sroce device in each: a real
# wire path (UDP, IP, a netdev, the ICRC) inside one VM.
NSA=sroce_na NSB=sroce_nb
ns() { "$IP" netns exec "$@"; }
netns_can_run() {
	[[ $SROCE_DRV == sroce ]] || skip "sroce devices only (link type sroce)"
	[[ -e /proc/self/ns/net ]] || skip "$(uname -r) has no network namespaces (CONFIG_NET_NS)"
	"$MODPROBE" -q veth 2>/dev/null || [[ -d /sys/module/veth ]] || skip "$(uname -r) has no veth"
}
ns_gid_index() { # NS DEV IPV4: the RoCE v2 GID of IPV4 on DEV, as NS sees it
	local want
	want=$(gid_of_addr "$3")
	ns "$1" bash -c 'for g in /sys/class/infiniband/'"$2"'/ports/1/gids/*; do
		read -r v <"$g" 2>/dev/null || continue
		[[ $v == '"$want"' ]] || continue
		read -r t <"${g%/gids/*}/gid_attrs/types/${g##*/}" 2>/dev/null || continue
		[[ $t == "RoCE v2" ]] && { echo "${g##*/}"; exit 0; }
	done; exit 1'
}
netns_down() {
	"$IP" netns del "$NSA" 2>/dev/null || true
	"$IP" netns del "$NSB" 2>/dev/null || true
	wait_for 60 sn_gone || true
}
# NSA holds veth end vna (10.77.0.1) and device sna, NSB vnb (.2) and snb.
netns_up() {
	netns_down
	"$IP" netns add "$NSA"
	"$IP" netns add "$NSB"
	"$IP" link add vna type veth peer name vnb
	"$IP" link set vna netns "$NSA"
	"$IP" link set vnb netns "$NSB"
	ns "$NSA" "$IP" addr add 10.77.0.1/24 dev vna
	ns "$NSB" "$IP" addr add 10.77.0.2/24 dev vnb
	ns "$NSA" "$IP" link set lo up
	ns "$NSB" "$IP" link set lo up
	ns "$NSA" "$IP" link set vna up
	ns "$NSB" "$IP" link set vnb up
	ns "$NSA" "$RDMA" link add sna type sroce netdev vna
	ns "$NSB" "$RDMA" link add snb type sroce netdev vnb
	ns "$NSA" "$RDMA" link show
	ns "$NSA" "$RDMA" link show | grep -qE '^link sna/1 .*netdev vna' || fail "NSA does not see sna on vna"
	wait_for 20 ns_gid_index "$NSA" sna 10.77.0.1 || fail "no RoCE v2 GID for 10.77.0.1 on sna"
	wait_for 20 ns_gid_index "$NSB" snb 10.77.0.2 || fail "no RoCE v2 GID for 10.77.0.2 on snb"
	GA=$(ns_gid_index "$NSA" sna 10.77.0.1) GB=$(ns_gid_index "$NSB" snb 10.77.0.2)
}
ns_pingpong() { # TOOL SIZE ITERS: server in NSA, client in NSB, data checked
	local tool=$1 size=$2 iters=$3 spid out
	next_port
	ns "$NSA" "$tool" -d sna -g "$GA" -c -s "$size" -n "$iters" -p "$_port" >/tmp/ns-srv.txt 2>&1 &
	spid=$!
	wait_for 30 ns_listening "$NSA" "$_port" || { cat /tmp/ns-srv.txt; fail "$tool server did not listen"; }
	out=$(timeout 120 "$IP" netns exec "$NSB" "$tool" -d snb -g "$GB" -c -s "$size" -n "$iters" -p "$_port" 10.77.0.1 2>&1) ||
		{ echo "$out"; cat /tmp/ns-srv.txt; fail "$tool client -s $size failed"; }
	wait "$spid" || { cat /tmp/ns-srv.txt; fail "$tool server -s $size failed"; }
	echo "$tool: $out"
	echo "$out" | grep -qE "^$iters iters in" || fail "$tool client did not report $iters iters"
	grep -qE "^$iters iters in" /tmp/ns-srv.txt || fail "$tool server did not report $iters iters"
}
ns_listening() { ns "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q .; }
# Counter NAME of device D (rdma statistic, from the initial namespace).
dcount() { DEV=$1 counter "$2"; }
sent_above() { (($(dcount "$1" sent_pkts) > $2)); }
sn_gone() { ! ls /sys/class/infiniband | grep -qE '^sn[ab]$'; }

t_netns() {
	netns_can_run
	local s0 l0 i0 s1 l1 i1 w0 w1 out n ok spid cpid
	trap netns_down EXIT
	netns_up
	info "sna GID $GA, snb GID $GB"
	s0=$(dcount sna sent_pkts) l0=$(dcount sna loopback_pkts) i0=$(dcount snb rcvd_icrc_err)
	w0=$(($(dcount sna worker_passes) + $(dcount snb worker_passes)))
	ns_pingpong ibv_rc_pingpong 4096 100
	# A packet that our transmit delivers over the veth pair is received in
	# the softirq that transmit ran: the sending pass runs the receiving QP
	# there (as loopback does), not a worker per message.
	w1=$(($(dcount sna worker_passes) + $(dcount snb worker_passes)))
	info "worker_passes +$((w1 - w0)) for 200 messages of 4 packets"
	((w1 - w0 < 100)) || fail "each message across the veth pair woke a worker: worker_passes +$((w1 - w0))"
	ns_pingpong ibv_ud_pingpong 512 50
	# rdma_cm resolves in the caller's namespace
	next_port
	ns "$NSA" rping -s -v -V -C 5 -S 1024 -a 10.77.0.1 -p "$_port" >/tmp/ns-rping-srv.txt 2>&1 &
	spid=$!
	ok=0
	for n in 1 2 3 4 5 6 7 8 9 10; do
		sleep 1
		out=$(timeout 60 "$IP" netns exec "$NSB" rping -c -v -V -C 5 -S 1024 -a 10.77.0.1 -p "$_port" 2>&1) && { ok=1; break; }
	done
	# -V: rping compares every ping's data and fails on a mismatch
	((ok)) && grep -q 'ping data: rdma-ping-4:' <<<"$out" ||
		{ echo "$out"; cat /tmp/ns-rping-srv.txt; fail "rping across namespaces did not verify 5 pings"; }
	info "rping: 5 pings of 1024 B verified"
	wait "$spid" || true
	next_port
	ns "$NSA" ib_write_bw -d sna -x "$GA" -F -s 65536 -n 200 -p "$_port" >/tmp/ns-bw-srv.txt 2>&1 &
	spid=$!
	wait_for 30 ns_listening "$NSA" "$_port" || fail "ib_write_bw server did not listen"
	timeout 120 "$IP" netns exec "$NSB" ib_write_bw -d snb -x "$GB" -F -s 65536 -n 200 -p "$_port" 10.77.0.1 >/tmp/ns-bw.txt 2>&1 ||
		{ cat /tmp/ns-bw.txt /tmp/ns-bw-srv.txt; fail "ib_write_bw across namespaces failed"; }
	wait "$spid" || true
	grep -E '^ *65536 ' /tmp/ns-bw.txt
	# a 0 from perftest's failed clock fit (slow kernels) counts, as in perf(),
	# only when every iteration ran
	nonzero "$(perf_bw /tmp/ns-bw.txt)" ||
		{ grep -q 'Correlation coefficient' /tmp/ns-bw.txt && [[ $(perf_iters /tmp/ns-bw.txt) == 200 ]]; } ||
		fail "ib_write_bw across namespaces reported no bandwidth"
	s1=$(dcount sna sent_pkts) l1=$(dcount sna loopback_pkts) i1=$(dcount snb rcvd_icrc_err)
	info "sna sent_pkts +$((s1 - s0)), loopback_pkts +$((l1 - l0)); snb rcvd_icrc_err +$((i1 - i0))"
	((s1 - s0 >= 150)) || fail "sna sent too few packets"
	((l1 == l0)) || fail "traffic between namespaces took the loopback path"
	((i1 == i0)) || fail "ICRC errors between namespaces"

	# Namespaces deleted under traffic, with the processes in the initial one
	# (devices are shared): the devices go, the users are disassociated.
	next_port
	ibv_rc_pingpong -d sna -g "$GA" -n 100000000 -p "$_port" >/tmp/ns-live-srv.txt 2>&1 &
	spid=$!
	wait_port "$_port" 30 || { cat /tmp/ns-live-srv.txt; fail "live server did not listen"; }
	ibv_rc_pingpong -d snb -g "$GB" -n 100000000 -p "$_port" 127.0.0.1 >/tmp/ns-live-cli.txt 2>&1 &
	cpid=$!
	s0=$(dcount sna sent_pkts)
	wait_for 30 sent_above sna $((s0 + 200)) ||
		{ cat /tmp/ns-live-*.txt; fail "no traffic before the namespaces went"; }
	dmesg_mark "netns-del"
	"$IP" netns del "$NSB"
	"$IP" netns del "$NSA"
	wait_for 90 sn_gone ||
		fail "devices still there 90 s after their namespaces went: $(ls /sys/class/infiniband)"
	"$RDMA" link show
	! "$RDMA" link show | grep -qE '^link sn[ab]/' || fail "rdma link still shows sna or snb"
	kill "$spid" "$cpid" 2>/dev/null || true
	wait "$spid" "$cpid" 2>/dev/null || true
	! dmesg_since "netns-del" | grep -E 'waiting for .* to become free' || fail "a netdev was kept from being freed"
	! dmesg_since "netns-del" | grep -E 'ib_query_port failed' || fail "query_port failed while the device went"
	assert_dmesg_clean "test netns"
}

# --- symptoms, for Documentation/troubleshooting.md -----------------------
# Each one made on the netns wire path and recorded as a user would see it
# (results/symptoms/*.txt, quoted in the troubleshooting guide), with the
# counter that tells it from the others asserted.
SYM_CNT="sent_pkts rcvd_pkts duplicate_request out_of_seq_request send_nak_seq_err retry_timeout retry_nak rcvd_icrc_err out_of_seq_response rcvd_read_ahead rcvd_read_later"
sym_snap() { # FILE: NAME=VALUE per counter of sna and snb
	local d c
	for d in sna snb; do
		for c in $SYM_CNT; do echo "$d.$c=$(dcount "$d" "$c")"; done
	done >"$1"
}
# "dev counter +delta" lines (only counters that moved) from two snapshots
sym_delta() { # BEFORE AFTER
	join -t= <(sort "$1") <(sort "$2") | awk -F= '$3 != $2 { split($1, k, "."); printf "%s %s +%d\n", k[1], k[2], $3 - $2 }'
}
sym_moved() { # DELTA-TEXT DEV COUNTER: how much it moved (0 if not)
	awk -v d="$2" -v c="$3" '$1 == d && $2 == c { v = substr($3, 2) } END { print v + 0 }' <<<"$1"
}
# rc_verify, server on sna (NSA) and client on snb (NSB); CARGS to the
# client.  Leaves the client's output in /tmp/sym-cli.txt; returns its status.
sym_rcv() { # CARGS
	local spid rc=0
	rcv_bin
	next_port
	# (|| true: a background failure is no test failure, the client says)
	{ ns "$NSA" "$RCV" -s -d sna -x "$GA" -p "$_port" -t 60 || true; } >/tmp/sym-srv.txt 2>&1 &
	spid=$!
	wait_for 30 ns_listening "$NSA" "$_port" || { cat /tmp/sym-srv.txt; fail "rc_verify server did not listen"; }
	# shellcheck disable=SC2086 # CARGS are words
	timeout 200 "$IP" netns exec "$NSB" "$RCV" -c 10.77.0.1 -d snb -x "$GB" -p "$_port" -t 60 $1 \
		>/tmp/sym-cli.txt 2>&1 || rc=$?
	wait "$spid" || true
	return "$rc"
}
# sym_rcv between two counter snapshots; what moved is left in SYM_D.
# An rc_verify failure fails the test with WHY.
sym_counted() { # CARGS WHY
	sym_snap /tmp/sym-b
	sym_rcv "$1" || { cat /tmp/sym-cli.txt; fail "$2"; }
	sym_snap /tmp/sym-a
	SYM_D=$(sym_delta /tmp/sym-b /tmp/sym-a)
}
# A sym_counted case's report in FILE: HEADER, rc_verify's last line, each
# LINE, then the counters that moved.
sym_report() { # FILE HEADER LINE...
	local file=$1 header=$2
	shift 2
	{
		echo "$header"
		tail -n1 /tmp/sym-cli.txt
		printf '%s\n' "$@"
		echo "$SYM_D"
	} | tee "$file"
}
# What netem has dropped on DEV in namespace NS so far.
netem_dropped() { # NS DEV
	ns "$1" "$TC" -s qdisc show dev "$2" | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -1
}
# The symptoms made with tc filters on vna's ingress (clsact is in place):
# UDP 4791 dropped on the path (a firewall), then a path that drops big
# frames (an MTU mismatch on the way).
sym_filters() { # OUT
	local out=$1 d
	# the requester retries into RETRY_EXC_ERR, the responder gets nothing
	ns "$NSA" "$TC" filter add dev vna ingress protocol ip flower ip_proto udp dst_port 4791 action drop
	sym_counted "-o write -S 65536 -r 2 -E retry_exc -W 30" "rc_verify did not see the expected retry error"
	d=$SYM_D
	{
		echo "# UDP 4791 dropped on sna's netdev (tc filter ... flower ip_proto udp dst_port 4791 action drop), rc_verify -r 2"
		grep -E 'expected error|flushed|rc_verify: OK' /tmp/sym-cli.txt
		echo "# counters that moved:"
		echo "$d"
		echo "# the filter's drops (tc -s filter show dev vna ingress):"
		ns "$NSA" "$TC" -s filter show dev vna ingress | grep -E 'Sent|action order'
	} | tee "$out/port_blocked.txt"
	grep -q 'expected error' /tmp/sym-cli.txt || fail "no expected-error line"
	(($(sym_moved "$d" snb retry_timeout) >= 3)) || fail "want retry_timeout +3 on the requester"
	(($(sym_moved "$d" sna rcvd_pkts) == 0)) || fail "the blocked responder received packets"
	ns "$NSA" "$TC" filter del dev vna ingress

	# A path that drops big frames (an MTU mismatch on the way): small
	# messages work, big ones end in RETRY_EXC_ERR; ping with DF tells why.
	ns "$NSA" "$TC" filter add dev vna ingress prio 1 basic match 'meta(pkt_len gt 700)' action drop
	sym_rcv "-o write,send -S 1,256 -m 1024" || { cat /tmp/sym-cli.txt; fail "small messages failed behind the MTU drop"; }
	tail -n1 /tmp/sym-cli.txt >/tmp/sym-small.txt
	sym_counted "-o write -S 4096 -m 1024 -r 2 -E retry_exc -W 30" "rc_verify did not see the expected retry error"
	d=$SYM_D
	{
		echo "# frames over 700 B dropped on the way to sna (tc filter ... basic match 'meta(pkt_len gt 700)' action drop)"
		echo "# rc_verify -S 1,256 (one packet each):"
		cat /tmp/sym-small.txt
		echo "# rc_verify -S 4096 -m 1024 (1024 B packets):"
		grep -E 'expected error|flushed' /tmp/sym-cli.txt
		echo "# counters that moved:"
		echo "$d"
		echo "# ping -M do -s 600 and -s 1000 (don't fragment):"
		ns "$NSB" ping -c 2 -W 1 -M "do" -s 600 10.77.0.1 | grep -E 'transmitted'
		ns "$NSB" ping -c 2 -W 1 -M "do" -s 1000 10.77.0.1 | grep -E 'transmitted' || true
	} | tee "$out/mtu_path.txt"
	grep -q 'expected error' /tmp/sym-cli.txt || fail "no expected-error line"
	(($(sym_moved "$d" snb retry_timeout) >= 3)) || fail "want retry_timeout +3 on the requester"
	grep -q ' 0% packet loss' "$out/mtu_path.txt" || fail "small pings were lost"
	grep -q '100% packet loss' "$out/mtu_path.txt" || fail "big pings were not lost"
	ns "$NSA" "$TC" qdisc del dev vna clsact
}
# An MR deregistered while WQEs that use it are still queued: the first WQE
# not yet transmitted fails with a local protection error, the QP goes to
# Error, the rest flush.  The tracepoints and `module sroce +p` say which key.
sym_mr_gone() { # OUT
	local out=$1 T=/sys/kernel/tracing DDC=/sys/kernel/debug/dynamic_debug/control n
	[[ -e $T/trace ]] || mount -t tracefs nodev "$T" || fail "no tracefs"
	echo 0 >"$T/tracing_on"
	echo >"$T/trace"
	one_cpu # (patching kernel text under TCG: see t_trace)
	echo 1 >"$T/events/sroce/sroce_cqe_err/enable"
	echo 1 >"$T/events/sroce/sroce_qp_state/enable"
	[[ -w $DDC ]] && echo "module sroce +p" >"$DDC"
	all_cpus
	dmesg_mark sym-mr
	echo 1 >"$T/tracing_on"
	n=0
	sym_rcv "-o write -S 65536 -q 64 -D -E loc_prot -W 30" || n=$?
	echo 0 >"$T/tracing_on"
	one_cpu
	echo 0 >"$T/events/sroce/sroce_cqe_err/enable"
	echo 0 >"$T/events/sroce/sroce_qp_state/enable"
	[[ -w $DDC ]] && echo "module sroce -p" >"$DDC"
	all_cpus
	((n == 0)) || { cat /tmp/sym-cli.txt; fail "rc_verify -D did not end in the expected local protection error"; }
	{
		echo "# rc_verify -o write -S 65536 -q 64 -D: ibv_dereg_mr on the source MR right after posting 64 WRITEs"
		grep -E 'ibv_dereg_mr|expected error|flushed' /tmp/sym-cli.txt
		echo "# tracepoints sroce_cqe_err and sroce_qp_state (/sys/kernel/tracing/trace), first lines:"
		grep -E 'sroce_cqe_err|sroce_qp_state: .* -> ERR' "$T/trace" | sed -n 's/^ *//; 1,3p'
		echo "# dmesg with echo 'module sroce +p' > /sys/kernel/debug/dynamic_debug/control:"
		dmesg_since sym-mr | grep -m1 'local protection error' || echo "(no dynamic debug in $(uname -r))"
	} | tee "$out/mr_deregistered.txt"
	grep -q 'returned 0 with 64 WQE' "$out/mr_deregistered.txt" || fail "ibv_dereg_mr under 64 WQEs did not return 0"
	grep -qE 'expected error .*local protection error' "$out/mr_deregistered.txt" || fail "no LOC_PROT_ERR completion"
	grep -qE 'sroce_cqe_err: .*status 4 \(local protection error\)' "$out/mr_deregistered.txt" ||
		fail "no sroce_cqe_err event with status 4"
	grep -qE 'sroce_qp_state: qpn 0x[0-9a-f]+ RTS -> ERR' "$T/trace" || fail "no RTS -> ERR in sroce_qp_state"
	if [[ -w $DDC ]]; then
		grep -qE 'qp 0x[0-9a-f]+: lkey 0x[0-9a-f]+ .*no valid MR has this key' "$out/mr_deregistered.txt" ||
			fail "module sroce +p, yet no debug line names the dead lkey"
	fi
	echo >"$T/trace"
	echo 1 >"$T/tracing_on"
}
# A window of READs under a light loss of READ responses only (sna's
# egress): 4 KiB ones (16 in flight, what max_rd_atomic allows) and 64 KiB
# ones (4 in flight: 64 packets each at MTU 1024, in the 256-PSN window).
# A lost response costs one re-request of its READ: the later READs'
# responses that come meanwhile are placed.  Dropped, each later READ had
# to be asked for again in turn while the responder went on to the next
# ones: about one re-request per READ, half the responses wasted.
sym_read_window() { # OUT
	local out=$1 d drops n oos
	ns "$NSA" "$TC" qdisc change dev vna root netem loss 0.3%
	drops=$(netem_dropped "$NSA" vna)
	sym_counted "-o read -S 4096,65536 -q 64 -n 8" "rc_verify READ window over a lossy link failed"
	d=$SYM_D
	drops=$(($(netem_dropped "$NSA" vna) - drops))
	n=$(($(sym_moved "$d" snb retry_nak) + $(sym_moved "$d" snb retry_timeout)))
	oos=$(sym_moved "$d" snb out_of_seq_response)
	sym_report "$out/lossy_read_window.txt" \
		"# 0.3% loss of sna's frames only (READ responses), rc_verify -o read -S 4096,65536 -q 64 -n 8: 1024 READs" \
		"# netem's drops on vna (tc -s qdisc show dev vna): $drops" "# counters that moved:"
	((drops > 0)) || fail "netem dropped nothing: the READ window case proves nothing"
	((n > 0)) || fail "$drops responses lost, yet the requester never asked again"
	# About one re-request per loss (some more: reordering between the
	# CPUs' backlogs, a timeout on a host that stalls the guest); a cascade
	# made it 2.4 per loss.  At most a READ's worth of responses dropped each.
	((2 * n <= 3 * drops + 16)) || fail "$drops responses lost cost $n re-requests (a cascade over the later READs)"
	((oos <= 64 * drops)) || fail "$drops responses lost, $oos responses dropped as out of sequence"
	(($(sym_moved "$d" snb rcvd_read_later) > 0)) || fail "no later READ's response placed while an older READ waited"
}
t_symptoms() {
	netns_can_run
	local out=$RESULTS/symptoms d n gl
	mkdir -p "$out"
	trap netns_down EXIT
	netns_up

	# Lossy Ethernet: 3% of the frames lost each way.  RC must still deliver
	# every byte; the recovery shows in the counters.
	ns "$NSA" "$TC" qdisc add dev vna root netem loss 3%
	ns "$NSB" "$TC" qdisc add dev vnb root netem loss 3%
	sym_counted "-o send,write,read -S 1,4096,65536 -n 4" "rc_verify over a lossy link failed"
	d=$SYM_D
	sym_report "$out/lossy.txt" "# 3% loss each way (tc qdisc add dev vna root netem loss 3%), rc_verify send,write,read" \
		"# counters that moved (rdma statistic show link sna/1 and snb/1):"
	n=$(($(sym_moved "$d" snb retry_timeout) + $(sym_moved "$d" snb retry_nak) + $(sym_moved "$d" sna retry_timeout) + $(sym_moved "$d" sna retry_nak)))
	((n > 0)) || fail "3% loss, yet no retransmission counted"
	(($(sym_moved "$d" sna out_of_seq_request) + $(sym_moved "$d" sna duplicate_request) > 0)) ||
		fail "3% loss, yet the responder saw no gap or duplicate"
	# Every 4th READ and atomic fenced: a resent fenced one must not wait
	# for the READs after it that were answered early (they hold their
	# max_rd_atomic slots until it is done).
	# (e877a8c: before it, this ran out of retries at a fenced READ within
	# 60 batches)
	sym_counted "-o read,faa -S 4096 -q 64 -n 60 -f 4" "rc_verify with fenced READs and atomics over a lossy link failed"
	d=$SYM_D
	sym_report "$out/lossy_fence.txt" \
		"# 3% loss each way, rc_verify -o read,faa -S 4096 -q 64 -n 60 -f 4: IBV_SEND_FENCE on every 4th WQE" \
		"# counters that moved:"
	(($(sym_moved "$d" snb retry_nak) + $(sym_moved "$d" snb retry_timeout) > 0)) ||
		fail "3% loss under fenced READs, yet no retransmission counted"
	# Loss after idle: 250 ms with nothing outstanding before each
	# one-packet message, so each starts a new ACK timer wait, and only
	# that timer can recover it or its lost ACK.
	ns "$NSA" "$TC" qdisc change dev vna root netem loss 10%
	ns "$NSB" "$TC" qdisc change dev vnb root netem loss 10%
	sym_counted "-o send,write -S 64 -q 1 -n 20 -I 250 -t 30" "rc_verify with idle gaps over a lossy link failed"
	d=$SYM_D
	sym_report "$out/lossy_idle.txt" \
		"# 10% loss each way, rc_verify -q 1 -I 250: 40 one-packet messages, each after 250 ms idle" \
		"# counters that moved:"
	(($(sym_moved "$d" snb retry_timeout) > 0)) || fail "10% loss after idle gaps, yet the ACK timer never retransmitted"
	ns "$NSB" "$TC" qdisc del dev vnb root
	sym_read_window "$out"
	ns "$NSA" "$TC" qdisc del dev vna root

	sym_mr_gone "$out"

	# The next two need tc filters on ingress (the stock kernels have
	# them; a debug kernel built before they were in its config does not).
	if ns "$NSA" "$TC" qdisc add dev vna clsact; then
		sym_filters "$out"
	else
		info "$(uname -r) has no clsact qdisc: the blocked-port and MTU cases are not run"
	fi

	# P_Key: the only table entry is index 0 (0xffff); another index is refused.
	next_port
	n=0
	# (perftest says why, then waits for a peer: the timeout ends it)
	ns "$NSA" timeout 10 ib_write_bw -d sna -x "$GA" -p "$_port" --pkey_index=1 >/tmp/sym-srv.txt 2>&1 || n=$?
	{
		echo "# ib_write_bw --pkey_index=1; exit $n"
		grep -iE 'fail|pkey|unable|error' /tmp/sym-srv.txt
		echo "# the P_Key table (/sys/class/infiniband/sna/ports/1/pkeys):"
		# shellcheck disable=SC2016 # expanded by the inner shell
		ns "$NSA" bash -c 'cd /sys/class/infiniband/sna/ports/1/pkeys && for k in *; do echo "$k $(cat "$k")"; done' 2>&1 | head -4
	} | tee "$out/pkey.txt"
	((n != 0)) || fail "ib_write_bw with P_Key index 1 did not fail"
	grep -q 'PKey Index, 1, greater than allowed max, 0' "$out/pkey.txt" || fail "perftest did not say the P_Key index is out of range"
	grep -q '^0 0xffff' "$out/pkey.txt" || fail "the P_Key table does not show 0 0xffff"

	# GID index confusion: the client picks its link-local (IPv6) GID, the
	# server gives an IPv4 one.  The families differ: RTR fails.
	# shellcheck disable=SC2016 # expanded by the inner shell
	gl=$(ns "$NSB" bash -c 'for g in /sys/class/infiniband/snb/ports/1/gids/*; do read -r v <"$g" 2>/dev/null && [[ $v == fe80:* ]] && { echo "${g##*/}"; exit 0; }; done; exit 1') ||
		fail "no link-local GID on snb"
	next_port
	{ ns "$NSA" timeout 30 ibv_rc_pingpong -d sna -g "$GA" -p "$_port" || true; } >/tmp/sym-srv.txt 2>&1 &
	wait_for 30 ns_listening "$NSA" "$_port" || fail "pingpong server did not listen"
	n=0
	timeout 60 "$IP" netns exec "$NSB" ibv_rc_pingpong -d snb -g "$gl" -p "$_port" 10.77.0.1 >/tmp/sym-cli.txt 2>&1 || n=$?
	wait || true
	{
		echo "# client: ibv_rc_pingpong -g $gl (its fe80:: GID) to a server on GID $GA (::ffff:10.77.0.1); exit $n"
		grep -v '^ *local address\|^ *remote address' /tmp/sym-cli.txt
		echo "# server:"
		grep -v '^ *local address\|^ *remote address' /tmp/sym-srv.txt
		echo "# the GID table (/sys/class/infiniband/snb/ports/1/gids and gid_attrs/types):"
		# shellcheck disable=SC2016 # expanded by the inner shell
		ns "$NSB" bash -c 'cd /sys/class/infiniband/snb/ports/1; for g in gids/*; do i=${g#gids/}; read -r v <"$g" 2>/dev/null || continue; [[ $v == 0000:0000:0000:0000:0000:0000:0000:0000 ]] || echo "$i $v $(cat gid_attrs/types/$i)"; done'
	} | tee "$out/gid_index.txt"
	((n != 0)) || fail "pingpong across GID families succeeded"
	grep -q 'Failed to modify QP to RTR' "$out/gid_index.txt" || fail "want 'Failed to modify QP to RTR'"
	netns_down
	assert_dmesg_clean "test symptoms"
}

# `rdma system set netns exclusive`: each device only in its namespace.
# ib_core switches modes only while no other namespace exists, and a deleted
# namespace lingers until its cleanup work has run.
rdma_netns_mode() { wait_for 60 "$RDMA" system set netns "$1"; }
_netns_exclusive_end() {
	netns_down
	rdma_netns_mode shared || echo "cannot go back to netns shared"
	"$RDMA" system show
}
t_netns_exclusive() {
	netns_can_run
	netns_down
	rdma_netns_mode exclusive || fail "rdma system set netns exclusive: $("$RDMA" system set netns exclusive 2>&1)"
	trap _netns_exclusive_end EXIT
	"$RDMA" system show | grep -q 'netns exclusive' || fail "rdma system did not switch to exclusive"
	netns_up
	! "$RDMA" link show | grep -qE '^link sn[ab]/' || fail "the initial namespace sees sna or snb"
	! ns "$NSB" "$RDMA" link show | grep -qE '^link sna/' || fail "NSB sees NSA's device"
	ns "$NSB" ibv_devices | grep -qw snb || fail "ibv_devices in NSB does not list snb"
	! ns "$NSB" ibv_devices | grep -qw sna || fail "ibv_devices in NSB lists sna"
	ns_pingpong ibv_rc_pingpong 4096 50
	# a device moves between namespaces (ib_core requires disassociation)
	ns "$NSB" "$RDMA" dev set snb netns "$NSA" || fail "rdma dev set snb netns $NSA failed"
	ns "$NSA" ibv_devices | grep -qw snb || fail "snb not in $NSA after the move"
	! ns "$NSB" ibv_devices | grep -qw snb || fail "snb still in $NSB after the move"
	netns_down
	sn_gone || fail "devices left after their namespaces went: $(ls /sys/class/infiniband)"
	assert_dmesg_clean "test netns_exclusive"
}

# Two GIDs of one device (two addresses of its netdev): the route between
# them goes through lo, which refuses RoCEv2 packets (lo_rx), so sroce
# loops them back as for one GID (loopback_pkts, no ICRC).
_local_gids_down() {
	"$IP" addr del 10.0.0.99/32 dev "$NETDEV" 2>/dev/null || true
	"$IP" addr del fd77::1/64 dev "$NETDEV" 2>/dev/null || true
	"$IP" addr del fd77::2/64 dev "$NETDEV" 2>/dev/null || true
}
# TOOL SIZE ITERS SGID CGID: server on GID index SGID, client on CGID, data checked
pp_gids() {
	local tool=$1 size=$2 iters=$3 spid out
	next_port
	"$tool" -d "$DEV" -g "$4" -c -s "$size" -n "$iters" -p "$_port" >/tmp/pg-srv.txt 2>&1 &
	spid=$!
	wait_port "$_port" 30 || { cat /tmp/pg-srv.txt; fail "$tool server did not listen"; }
	out=$(timeout 120 "$tool" -d "$DEV" -g "$5" -c -s "$size" -n "$iters" -p "$_port" 127.0.0.1 2>&1) ||
		{ echo "$out"; cat /tmp/pg-srv.txt; fail "$tool client -s $size from GID $5 to $4 failed"; }
	wait "$spid" || { cat /tmp/pg-srv.txt; fail "$tool server -s $size on GID $4 failed"; }
	echo "$tool GID $5 -> $4: $out"
	echo "$out" | grep -qE "^$iters iters in" || fail "$tool client did not report $iters iters"
	grep -qE "^$iters iters in" /tmp/pg-srv.txt || fail "$tool server did not report $iters iters"
}
t_local_gids() {
	local g1 g2 h1 h2 l0 l1 d0 d1
	[[ $SROCE_DRV == sroce ]] || skip "lo_rx is sroce's (rdma_rxe drops packets on lo)"
	ensure_link
	[[ $(cat "/sys/module/$MOD/parameters/lo_rx") == N ]] || fail "lo_rx is on: the test would not show the direct path"
	trap _local_gids_down EXIT
	"$IP" addr add 10.0.0.99/32 dev "$NETDEV"
	"$IP" addr add fd77::1/64 dev "$NETDEV" nodad
	"$IP" addr add fd77::2/64 dev "$NETDEV" nodad
	wait_for 20 roce_v2_gid_index 10.0.0.99 || fail "no RoCE v2 GID for 10.0.0.99"
	wait_for 20 roce_v2_gid_index fd77::1 || fail "no RoCE v2 GID for fd77::1"
	wait_for 20 roce_v2_gid_index fd77::2 || fail "no RoCE v2 GID for fd77::2"
	g1=$(roce_v2_gid_index) g2=$(roce_v2_gid_index 10.0.0.99)
	h1=$(roce_v2_gid_index fd77::1) h2=$(roce_v2_gid_index fd77::2)
	info "GIDs $g1 ($(my_ip)), $g2 (10.0.0.99), $h1 (fd77::1), $h2 (fd77::2)"
	l0=$(counter loopback_pkts) d0=$(counter rcvd_local_drop)
	pp_gids ibv_rc_pingpong 4096 100 "$g1" "$g2"
	pp_gids ibv_ud_pingpong 512 50 "$g1" "$g2"
	pp_gids ibv_rc_pingpong 4096 100 "$h2" "$h1"
	l1=$(counter loopback_pkts) d1=$(counter rcvd_local_drop)
	info "loopback_pkts +$((l1 - l0)), rcvd_local_drop +$((d1 - d0))"
	# each RC run: 2 x 100 messages of 4 packets (and their ACKs); 100 datagrams
	((l1 - l0 >= 2 * 800 + 100)) || fail "loopback_pkts moved by $((l1 - l0)): the traffic did not take the direct path"
	((d1 == d0)) || fail "rcvd_local_drop moved by $((d1 - d0)): packets went through lo"
	_local_gids_down
	assert_dmesg_clean "test local_gids"
}

# Kernel-consumer verbs (tests/kmod/sroce_kverbs.c): fast registration, local
# and remote invalidation (also of a region a 2 MiB WRITE is landing in),
# and their error rules (another PD's key, a page list too short, an old key
# byte as L_Key), the PDs of a QP on an SRQ of another PD, a UD QP's multicast
# loopback block, and a QP whose CQ overflowed, then drained, checked byte by
# byte and completion by completion inside the module; it prints one line
# per case.
# A case the device or kernel cannot run prints SKIP instead of PASS.
KVERBS_CASES=20
# --- per-QP counters (rdma statistic qp) ---------------------------------
# A QP bound to an rdma_counter counts there only; the core adds the
# counters, and those of counters gone, to the link's.  So the link moves
# exactly as much as the counters show, and keeps it when they go.
# One record per counter: CNTN LQPNS(comma list) SENT RCVD
qpc_records() {
	"$RDMA" statistic qp show link "$DEV/1" | awk '
		$1 == "link" {
			for (i = 2; i < NF; i++) {
				if ($i == "cntn") c = $(i + 1)
				if ($i == "sent_pkts") s = $(i + 1)
				if ($i == "rcvd_pkts") r = $(i + 1)
			}
		}
		$1 == "LQPN:" { q = $2; gsub(/[<>]/, "", q); print c, q, s, r }'
}
# A loopback rc_verify pair that keeps its QPs (rc_verify -H) after the
# traffic: QPC_SQ/QPC_CQ their QPNs, QPC_PIDS the processes.
qpc_pair() {
	local gidx
	gidx=$(roce_v2_gid_index)
	next_port
	"$RCV" -s -d "$DEV" -x "$gidx" -p "$_port" -H 120 >/tmp/qpc-srv.txt 2>&1 &
	QPC_PIDS=$!
	wait_port "$_port" 30 || { cat /tmp/qpc-srv.txt; fail "rc_verify server did not listen"; }
	"$RCV" -c 127.0.0.1 -d "$DEV" -x "$gidx" -p "$_port" -o send,write,read -S 1,4096,65536 \
		-H 120 >/tmp/qpc-cli.txt 2>&1 &
	QPC_PIDS="$QPC_PIDS $!"
	wait_for 120 grep -q '^rc_verify: HOLD' /tmp/qpc-cli.txt ||
		{ cat /tmp/qpc-cli.txt; fail "rc_verify client did not finish its traffic"; }
	wait_for 30 grep -q '^rc_verify: HOLD' /tmp/qpc-srv.txt ||
		{ cat /tmp/qpc-srv.txt; fail "rc_verify server did not finish its traffic"; }
	QPC_SQ=$(sed -n 's/^rc_verify: HOLD qpn=//p' /tmp/qpc-srv.txt)
	QPC_CQ=$(sed -n 's/^rc_verify: HOLD qpn=//p' /tmp/qpc-cli.txt)
	info "rc_verify done, QPs $QPC_SQ (server) and $QPC_CQ (client) kept"
}
qpc_end() { # the QPs go: the core unbinds them and frees the counters
	local p
	for p in $QPC_PIDS; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	QPC_PIDS=
}
_qpc_cleanup() {
	# shellcheck disable=SC2086
	kill ${QPC_PIDS:-} 2>/dev/null || true
	"$RDMA" statistic qp set link "$DEV/1" auto off 2>/dev/null || true
}
# The opt-in send queue poller (sq_poll_us): a QP's stream of posts is
# handed to a poller on the other CPU.  rc_verify still checks every byte,
# completion, READ and atomic result; the poller must have taken
# doorbells; a client killed while its QP is polled (its QP destroyed
# under the poller) leaves a clean kernel and a working device.
sqp_past() { (($(counter sq_poll_doorbells) > $1)); }
t_sq_poll() {
	local p=/sys/module/$MOD/parameters/sq_poll_us s0 d0 s1 d1 d2 s2 s3 b1 b2 c1 c2 n gidx spid cpid
	[[ $SROCE_DRV == sroce ]] || skip "sroce's module parameter"
	(($(nproc) > 1)) || skip "one CPU: no other CPU to poll on"
	ensure_link
	[[ $(cat "$p") == 0 ]] || fail "sq_poll_us is $(cat "$p") by default, not 0"
	echo 1000 >"$p" || fail "cannot set sq_poll_us"
	# shellcheck disable=SC2064 # $p now: the trap runs outside this function
	trap "echo 0 >$p" EXIT
	s0=$(counter sq_poll_starts) d0=$(counter sq_poll_doorbells)
	rcv_pair "" "-o write,writeimm,send,read,faa,cas -S 64,4096 -n 40 -q 64 -1"
	s1=$(counter sq_poll_starts) d1=$(counter sq_poll_doorbells)
	info "rc_verify $(rcv_ok_field ops) WQEs: sq_poll_starts +$((s1 - s0)), sq_poll_doorbells +$((d1 - d0))"
	((d1 - d0 > 0)) || fail "no doorbell went to a poller (sq_poll_starts +$((s1 - s0)))"
	# An atomic stream: requests and responses chain on past the hop
	# bound, and the poller runs the rest itself; queued to workers, they
	# kept it off its CPU until it gave way.
	b1=$(counter sq_poll_backoffs) c1=$(counter sq_poll_chained)
	rcv_pair "" "-o faa,cas -S 8 -n 400 -q 64 -1"
	d2=$(counter sq_poll_doorbells) b2=$(counter sq_poll_backoffs) c2=$(counter sq_poll_chained)
	n=$(rcv_ok_field ops)
	info "rc_verify $n atomics: sq_poll_doorbells +$((d2 - d1)), sq_poll_chained +$((c2 - c1)), sq_poll_backoffs +$((b2 - b1))"
	((d2 > d1)) || fail "no doorbell of $n atomics went to a poller"
	((c2 > c1)) || fail "no poller ran a chain on past its bound (sq_poll_chained +0)"
	d1=$d2

	gidx=$(roce_v2_gid_index)
	next_port
	# not under timeout(1), which takes them out of the test's process
	# group: the watchdog's kill must reach them, and kill -9 the client
	ib_write_bw -d "$DEV" -x "$gidx" -p "$_port" -s 64 -D 40 >/tmp/sqp-srv.txt 2>&1 &
	spid=$!
	wait_port "$_port" 30 || { cat /tmp/sqp-srv.txt; fail "ib_write_bw server did not listen"; }
	ib_write_bw -d "$DEV" -x "$gidx" -p "$_port" -s 64 -D 40 127.0.0.1 >/tmp/sqp-cli.txt 2>&1 &
	cpid=$!
	wait_for 30 sqp_past $((d1 + 200)) ||
		{ cat /tmp/sqp-cli.txt; fail "ib_write_bw's doorbells did not go to a poller"; }
	d2=$(counter sq_poll_doorbells)
	kill -0 "$cpid" 2>/dev/null || { cat /tmp/sqp-cli.txt; fail "ib_write_bw client ended before the kill"; }
	kill -9 "$cpid"
	wait "$cpid" 2>/dev/null || true
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	info "ib_write_bw killed with sq_poll_doorbells +$((d2 - d1))"
	# the device still works, and so do pollers (none leaked their slot)
	s2=$(counter sq_poll_starts)
	rcv_pair "" "-o write,send,read -S 64,65536 -n 20 -q 64 -1"
	s3=$(counter sq_poll_starts)
	info "then rc_verify $(rcv_ok_field ops) WQEs: sq_poll_starts +$((s3 - s2))"
	((s3 > s2)) || fail "no poller started after the kill"
	echo 0 >"$p"
	assert_dmesg_clean "test sq_poll"
}
t_qp_counters() {
	[[ $SROCE_DRV == sroce ]] || skip "sroce's counters"
	local s0 r0 recs n cntn lq sent rcvd ss rs s1 r1
	ensure_link
	rcv_bin
	trap _qpc_cleanup EXIT

	# auto type: both RC QPs into one counter
	"$RDMA" statistic qp set link "$DEV/1" auto type on || fail "rdma statistic qp set ... auto type on"
	"$RDMA" statistic qp mode link "$DEV/1" | grep -q 'auto type on' || fail "auto mode not shown"
	s0=$(counter sent_pkts) r0=$(counter rcvd_pkts)
	qpc_pair
	"$RDMA" statistic qp show link "$DEV/1"
	recs=$(qpc_records)
	echo "$recs"
	[[ $(wc -l <<<"$recs") == 1 ]] || fail "want one RC counter, got: $recs"
	read -r cntn lq sent rcvd <<<"$recs"
	[[ ",$lq," == *",$QPC_SQ,"* && ",$lq," == *",$QPC_CQ,"* ]] ||
		fail "counter $cntn holds QPs <$lq>, want $QPC_SQ and $QPC_CQ"
	((sent > 0 && rcvd > 0)) || fail "counter $cntn did not count: sent $sent rcvd $rcvd"
	# the link is exactly the counter: nothing counted twice or missed
	s1=$(counter sent_pkts) r1=$(counter rcvd_pkts)
	info "counter $cntn: sent $sent rcvd $rcvd; link moved sent +$((s1 - s0)) rcvd +$((r1 - r0))"
	((s1 - s0 == sent && r1 - r0 == rcvd)) || fail "link moved +$((s1 - s0))/+$((r1 - r0)), counter $sent/$rcvd"
	qpc_end
	[[ -z $(qpc_records) ]] || fail "counters left after the QPs went: $(qpc_records)"
	(($(counter sent_pkts) == s1 && $(counter rcvd_pkts) == r1)) ||
		fail "link lost or gained counts when the counter went: $(counter sent_pkts)/$(counter rcvd_pkts), was $s1/$r1"

	# auto pid: one counter per process, so one per QP here
	"$RDMA" statistic qp set link "$DEV/1" auto pid on || fail "rdma statistic qp set ... auto pid on"
	s0=$(counter sent_pkts) r0=$(counter rcvd_pkts)
	qpc_pair
	recs=$(qpc_records)
	echo "$recs"
	[[ $(wc -l <<<"$recs") == 2 ]] || fail "want two counters (one per process), got: $recs"
	ss=0 rs=0
	while read -r cntn lq sent rcvd; do
		[[ $lq == "$QPC_SQ" || $lq == "$QPC_CQ" ]] || fail "counter $cntn holds <$lq>, want one of our QPs"
		((sent > 0 && rcvd > 0)) || fail "counter $cntn (QP $lq) did not count"
		ss=$((ss + sent)) rs=$((rs + rcvd))
	done <<<"$recs"
	# loopback: what one QP sent, the other received
	n=$(awk '{ print $3 }' <<<"$recs" | paste -sd' ')
	info "per-QP sent_pkts: $n"
	s1=$(counter sent_pkts) r1=$(counter rcvd_pkts)
	((s1 - s0 == ss && r1 - r0 == rs)) || fail "link moved +$((s1 - s0))/+$((r1 - r0)), counters $ss/$rs"
	((ss == rs)) || fail "loopback: the QPs sent $ss and received $rs"

	# manual: auto off, bind the server's idle QP to a new counter, unbind it
	"$RDMA" statistic qp set link "$DEV/1" auto off || fail "auto off"
	qpc_end
	qpc_pair
	[[ -z $(qpc_records) ]] || fail "auto off, yet counters: $(qpc_records)"
	"$RDMA" statistic qp bind link "$DEV/1" lqpn "$QPC_SQ" || fail "rdma statistic qp bind lqpn $QPC_SQ"
	recs=$(qpc_records)
	echo "$recs"
	read -r cntn lq sent rcvd <<<"$recs"
	[[ $lq == "$QPC_SQ" && $sent == 0 ]] || fail "manual counter: $recs (want QP $QPC_SQ, nothing counted)"
	"$RDMA" statistic qp unbind link "$DEV/1" cntn "$cntn" lqpn "$QPC_SQ" || fail "rdma statistic qp unbind"
	[[ -z $(qpc_records) ]] || fail "counter $cntn left after unbind: $(qpc_records)"
	qpc_end
	assert_dmesg_clean "test qp_counters"
}

t_kverbs() {
	local km mark lines want fw0
	ensure_link
	fw0=$(counter flush_cq_wait)
	km=${KO:+$(dirname "$KO")/sroce_kverbs.ko}
	[[ -f $km ]] || km=$REPO/build/modules/$(uname -r)/sroce_kverbs.ko
	[[ -f $km ]] || fail "test module $km not found (make modules builds it)"
	mark="kverbs-$$-$RANDOM"
	echo "$mark" >/dev/kmsg
	local rc=0
	insmod "$km" dev="$DEV" || rc=$?
	lines=$(dmesg | sed -n "/$mark/,\$p" | grep 'sroce_kverbs:')
	echo "$lines"
	((rc == 0)) || fail "insmod sroce_kverbs failed ($rc): $(echo "$lines" | grep -m1 FAIL)"
	rmmod sroce_kverbs || fail "rmmod sroce_kverbs"
	want=$((KVERBS_CASES - $(echo "$lines" | grep -c ': SKIP ' || true)))
	[[ $(echo "$lines" | grep -c ': PASS ') == "$want" ]] ||
		fail "want $want PASS lines"
	echo "$lines" | grep -q ": $want passed, 0 failed" || fail "no clean tally line"
	# cq_overflow_qp_err_drain: the flushes waited for room in the full CQ
	(($(counter flush_cq_wait) > fw0)) || fail "flush_cq_wait did not move from $fw0"
	assert_dmesg_clean "test kverbs"
}

# ---------------------------------------------------------------------------
# Sourced by other suites (bench.sh) for the helpers above: stop here.
[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0

SUITE_PREFIX=${SUITE_PREFIX:-}
suite_begin "basic($SROCE_DRV)"
echo "driver=$SROCE_DRV module=$MOD type=$LTYPE device=$DEV netdev=$NETDEV ko=${KO:-<in-tree>}"
run_test setup 300 setup
if grep -q "^FAIL ${SUITE_PREFIX}setup" "$RESULTS_TXT"; then
	suite_end
	exit 1
fi
run_test load_unload 120 t_load_unload
run_test link_add_delete 120 t_link_add_delete
run_test devinfo 60 t_devinfo
run_test port_netdev 120 t_port_netdev
run_test rxe_exclusion 120 t_rxe_exclusion
run_test pingpong_1 120 t_pingpong_1
run_test pingpong_1024 120 t_pingpong_1024
run_test pingpong_4096 120 t_pingpong_4096
run_test pingpong_65536 180 t_pingpong_65536
run_test pingpong_late_ack 180 t_pingpong_late_ack
run_test send_bw 240 t_send_bw
run_test write_bw 240 t_write_bw
run_test read_bw 240 t_read_bw
run_test rc_verify 480 t_rc_verify
run_test rc_verify_gather 300 t_rc_verify_gather
run_test rc_verify_rnr_late 480 t_rc_verify_rnr_late
run_test rc_verify_rnr_exhausted 120 t_rc_verify_rnr_exhausted
run_test trace 240 t_trace
run_test rc_verify_peer_gone 120 t_rc_verify_peer_gone
run_test qp_counters 300 t_qp_counters
run_test sq_poll 300 t_sq_poll
run_test kverbs 120 t_kverbs
run_test netns 420 t_netns
run_test netns_exclusive 240 t_netns_exclusive
run_test local_gids 240 t_local_gids
run_test symptoms 600 t_symptoms
run_test rmmod_busy 180 t_rmmod_busy
suite_end
