#!/bin/bash
# Kernel storage clients over the device, run INSIDE the test VM
# (tests/vm/run-suite -k KVER ulp): target and host on the same device, so
# every I/O crosses the RC transport twice (loopback, no wire).
#
#   nvme        nvmet with an rdma port (configfs) on a brd ramdisk, nvme-rdma
#               host: fio verify=crc32c at 4 KiB (iodepth 1 and 32) and
#               128 KiB / 1 MiB (iodepth 32) over ULP_NVME_QUEUES I/O queues,
#               then disconnect, reconnect and read the last pattern back;
#               sroce's counters must show the traffic and no drop of ours.
#   nfs         knfsd on rdma port 20049 exporting a tmpfs, mount -o rdma:
#               a tree of files of mixed sizes and a 4 x ULP_SIZE_MB O_DIRECT
#               file (at most 256 MiB), checked on the server, then after
#               unmount/remount.
#   iser        LIO target (configfs) with iSER on its portal, open-iscsi
#               on an iser iface: login, fio verify, logout, login, the
#               pattern written before the logout reads back.
#   srp         ib_srpt (configfs) on rdma_cm port 5000, ib_srp add_target
#               with dest=IP:5000: fio verify, logout, login, pattern
#               intact; no fall-back to the global rkey.
# The protocols' target and host halves are in storage.sh (shared with the
# two-VM form, ulp-pair.sh). ULP_SIZE_MB (default 16) bounds what each fio
# job writes; ULP_FULL=1 is the long form (make check-ulp: 256 MiB per job).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/vm/basic.sh
. "$HERE/basic.sh"
# shellcheck source=tests/vm/storage.sh
. "$HERE/storage.sh"

t_nvme() {
	local ip mark tx0 tx1 rx0 rx1 bad c n
	ensure_link
	ip=$(my_ip)
	mark="nvme-$$"
	dmesg_mark "$mark"
	nvme_host_down
	nvmet_up "$ip"
	tx0=$(counter sent_pkts) rx0=$(counter rcvd_pkts)
	declare -A drops0
	for c in rcvd_malformed rcvd_icrc_err rcvd_bad_opcode rcvd_not_from_peer rcvd_pkey_mismatch; do
		drops0[$c]=$(counter "$c")
	done
	nvme_host_run "$ip"
	tx1=$(counter sent_pkts) rx1=$(counter rcvd_pkts)
	info "sroce packets: sent $((tx1 - tx0)), received $((rx1 - rx0))"
	# each fio job alone moves ULP_SIZE_MB twice, in packets of at most 4 KiB
	(( tx1 - tx0 > ULP_SIZE_MB * 256 )) || fail "fewer packets sent ($((tx1 - tx0))) than the I/O needs"
	bad=
	for c in "${!drops0[@]}"; do
		n=$(counter "$c")
		((n == drops0[$c])) || bad+=" $c+$((n - drops0[$c]))"
	done
	[[ -z $bad ]] || fail "drop counters moved:$bad"
	nvme_host_down
	nvmet_down
	grep -q "Memory registrations not supported" <(dmesg_since "$mark") && fail "host refused the device for fast registration"
	assert_dmesg_clean "$mark"
}

t_nfs() {
	local ip mark
	ensure_link
	ip=$(my_ip)
	mark="nfs-$$"
	dmesg_mark "$mark"
	nfs_client_down
	nfs_server_up
	nfs_client_write "$ip"
	nfs_server_check /tmp/nfs-src.sums "$(cat /tmp/nfs-big.sum)"
	nfs_client_reread "$ip"
	nfs_server_down
	assert_dmesg_clean "$mark"
}

t_iser() {
	local ip mark
	ensure_link
	ip=$(my_ip)
	mark="iser-$$"
	dmesg_mark "$mark"
	iser_host_down
	iser_target_up "$ip"
	iser_host_run "$ip"
	iser_host_down
	iser_target_down
	assert_dmesg_clean "$mark"
}

t_srp() {
	local ip mark
	ensure_link
	ip=$(my_ip)
	mark="srp-$$"
	dmesg_mark "$mark"
	srp_logout
	srpt_up "$(srp_initiator_port_id)"
	srp_host_run "$ip" "$SRP_SGUID"
	srpt_down
	assert_dmesg_clean "$mark"
}

# ---------------------------------------------------------------------------
SUITE_PREFIX=${SUITE_PREFIX:-}
suite_begin "ulp($SROCE_DRV)"
echo "driver=$SROCE_DRV module=$MOD type=$LTYPE device=$DEV netdev=$NETDEV ko=${KO:-<in-tree>} size=${ULP_SIZE_MB}M"
run_test setup 300 setup
if grep -q "^FAIL ${SUITE_PREFIX}setup" "$RESULTS_TXT"; then
	suite_end
	exit 1
fi
ULP_TMO=420
((ULP_FULL)) && ULP_TMO=1800
run_test nvme "$ULP_TMO" t_nvme
run_test nfs "$ULP_TMO" t_nfs
run_test iser "$ULP_TMO" t_iser
run_test srp "$ULP_TMO" t_srp
suite_end
