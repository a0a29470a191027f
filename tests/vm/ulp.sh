#!/bin/bash
# Kernel storage clients over the device, run INSIDE the test VM
# (tests/vm/run-suite -k KVER ulp): target and host on the same device, so
# every I/O crosses the RC transport twice (loopback, no wire).
#
#   nvme        nvmet with an rdma port (configfs) on a brd ramdisk, nvme-rdma
#               host: fio verify=crc32c at 4 KiB (iodepth 1 and 32) and
#               128 KiB / 1 MiB (iodepth 32) over ULP_NVME_QUEUES I/O queues,
#               then disconnect, reconnect and read the last pattern back.
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
# In every test sroce's sent packets must cover the I/O at the active MTU
# and no drop counter may move (storage.sh's cnt_begin/cnt_check).
# The protocols' target and host halves are in storage.sh (shared with the
# two-VM form, ulp-pair.sh). ULP_SIZE_MB (default 16) bounds what each fio
# job writes; ULP_FULL=1 is the long form (make check-ulp: 256 MiB per job).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/vm/basic.sh
. "$HERE/basic.sh"
# shellcheck source=tests/vm/storage.sh
. "$HERE/storage.sh"

# One device carries both halves: it sends the host's writes and the
# target's read data, each at least once.
twice_pkts() { echo $((2 * $(pkts_for "$1"))); }

t_nvme() {
	local ip mark
	ensure_link
	ip=$(my_ip)
	mark="nvme-$$"
	dmesg_mark "$mark"
	nvme_host_down
	nvmet_up "$ip"
	cnt_begin
	nvme_host_run "$ip"
	cnt_check "$(twice_pkts "$ULP_SIZE_MB")"
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
	cnt_begin
	nfs_client_write "$ip"
	nfs_server_check /tmp/nfs-src.sums "$(cat /tmp/nfs-big.sum)"
	nfs_client_reread "$ip"
	cnt_check "$(twice_pkts "$NFS_BIG_MB")"
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
	cnt_begin
	iser_host_run "$ip"
	cnt_check "$(twice_pkts "$ULP_SIZE_MB")"
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
	cnt_begin
	srp_host_run "$ip" "$SRP_SGUID"
	cnt_check "$(twice_pkts "$ULP_SIZE_MB")"
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
