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
# ULP_SIZE_MB (default 16) bounds what each fio job writes; ULP_FULL=1 is
# the long form (make check-ulp: 256 MiB per job).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/vm/basic.sh
. "$HERE/basic.sh"

ULP_FULL=${ULP_FULL:-0}
ULP_SIZE_MB=${ULP_SIZE_MB:-$( ((ULP_FULL)) && echo 256 || echo 16)}
ULP_NVME_QUEUES=${ULP_NVME_QUEUES:-2}
NQN=nqn.2026-12.io.sroce:ulp-nvme
NVMET=/sys/kernel/config/nvmet
LIO=/sys/kernel/config/target

configfs_up() {
	"$MODPROBE" configfs
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
}

my_ip() { "$IP" -4 -o addr show dev "$NETDEV" | awk '{ print $4 }' | cut -d/ -f1 | head -n1; }

# The first disk of a SCSI host or session's device directory ($1).
scsi_disk_of() {
	local d
	for d in "$1"/target*/*/block/*; do
		[[ -e $d ]] && { echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}

# A 4 MiB random pattern onto the start of disk $1; pattern_check reads it
# back (after a disconnect/logout and a new connection) or fails with $2.
pattern_write() {
	dd if=/dev/urandom of=/tmp/pat bs=1M count=4 status=none
	dd if=/tmp/pat of="$1" bs=1M oflag=direct status=none
}
pattern_check() {
	[[ $(dd if="$1" bs=1M count=4 iflag=direct status=none | sha256sum) == "$(sha256sum </tmp/pat)" ]] ||
		fail "$2"
}

# ---------------------------------------------------------------------------
# NVMe over Fabrics

nvme_ctrl_of_nqn() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[[ -r $c/subsysnqn && $(cat "$c/subsysnqn") == "$NQN" ]] || continue
		echo "${c##*/}"
		return 0
	done
	return 1
}

# The block device of our namespace (nvmeXnY), once the host has it.
nvme_ns_dev() {
	local c n
	c=$(nvme_ctrl_of_nqn) || return 1
	for n in /sys/class/nvme/"$c"/nvme*n*; do
		[[ -e $n ]] || continue
		n=${n##*/}
		# native multipath names the disk after the subsystem: nvmeXcYnZ -> nvmeXnZ
		n=$(sed -E 's/^(nvme[0-9]+)c[0-9]+(n[0-9]+)$/\1\2/' <<<"$n")
		[[ -b /dev/$n ]] && { echo "/dev/$n"; return 0; }
	done
	for n in /sys/block/nvme*; do
		[[ -r $n/device/subsysnqn ]] || continue
		[[ $(cat "$n/device/subsysnqn") == "$NQN" ]] && { echo "/dev/${n##*/}"; return 0; }
	done
	return 1
}

nvmet_teardown() {
	local p
	[[ -d $NVMET ]] || return 0
	for p in "$NVMET"/ports/*; do
		[[ -d $p ]] || continue
		rm -f "$p/subsystems/$NQN" 2>/dev/null || true
		rmdir "$p" 2>/dev/null || true
	done
	if [[ -d $NVMET/subsystems/$NQN ]]; then
		echo 0 >"$NVMET/subsystems/$NQN/namespaces/1/enable" 2>/dev/null || true
		rmdir "$NVMET/subsystems/$NQN/namespaces/1" 2>/dev/null || true
		rmdir "$NVMET/subsystems/$NQN" 2>/dev/null || true
	fi
	true
}

nvme_cleanup() {
	nvme disconnect -n "$NQN" >/dev/null 2>&1 || true
	nvmet_teardown
	"$MODPROBE" -r nvme_rdma nvme_fabrics nvmet_rdma nvmet 2>/dev/null || true
	"$MODPROBE" -r brd 2>/dev/null || true
	true
}

nvme_connect() {
	local ip=$1 dev
	nvme connect -t rdma -a "$ip" -s 4420 -n "$NQN" -i "$ULP_NVME_QUEUES" ||
		fail "nvme connect -t rdma -a $ip failed: $(dmesg | grep -E 'nvme|sroce' | tail -n3 | tr '\n' ' ')"
	wait_for 30 nvme_ns_dev || fail "no namespace block device after connect"
	dev=$(nvme_ns_dev)
	info "connected: $(nvme_ctrl_of_nqn) -> $dev ($(cat /sys/class/nvme/"$(nvme_ctrl_of_nqn)"/transport))"
	[[ $(cat /sys/class/nvme/"$(nvme_ctrl_of_nqn)"/transport) == rdma ]] || fail "controller transport is not rdma"
}

# fio job writing a crc32c-verified pattern over the whole of SIZE; every
# block is read back and checked in the same job.
fio_verify() {
	local dev=$1 bs=$2 qd=$3 name=$4 out=/tmp/fio-$4.txt
	fio --name="$name" --filename="$dev" --direct=1 --ioengine=libaio \
		--rw=randwrite --bs="$bs" --iodepth="$qd" --size="${ULP_SIZE_MB}M" \
		--verify=crc32c --verify_fatal=1 --do_verify=1 --randrepeat=0 \
		--output="$out" ||
		{ cat "$out"; fail "fio $name failed (bs $bs, iodepth $qd)"; }
	grep -E 'err=|WRITE:|READ:' "$out" | sed 's/^/    /'
	grep -q 'err= 0' "$out" || { cat "$out"; fail "fio $name reported an error"; }
	grep -qE 'verify: bad|crc32c: verify failed' "$out" && fail "fio $name: verify failure"
	true
}

t_nvme() {
	local ip dev mark tx0 tx1 rx0 rx1 bad c n
	ensure_link
	ip=$(my_ip)
	mark="nvme-$$"
	dmesg_mark "$mark"
	nvme_cleanup
	"$MODPROBE" brd rd_nr=1 rd_size=$(( (ULP_SIZE_MB + 16) * 1024 )) max_part=0 || fail "modprobe brd"
	"$MODPROBE" nvmet || fail "modprobe nvmet"
	"$MODPROBE" nvmet-rdma || fail "modprobe nvmet-rdma"
	"$MODPROBE" nvme-rdma || fail "modprobe nvme-rdma"
	configfs_up
	mkdir "$NVMET/subsystems/$NQN"
	echo 1 >"$NVMET/subsystems/$NQN/attr_allow_any_host"
	mkdir "$NVMET/subsystems/$NQN/namespaces/1"
	echo /dev/ram0 >"$NVMET/subsystems/$NQN/namespaces/1/device_path"
	echo 1 >"$NVMET/subsystems/$NQN/namespaces/1/enable"
	mkdir "$NVMET/ports/1"
	echo rdma >"$NVMET/ports/1/addr_trtype"
	echo ipv4 >"$NVMET/ports/1/addr_adrfam"
	echo "$ip" >"$NVMET/ports/1/addr_traddr"
	echo 4420 >"$NVMET/ports/1/addr_trsvcid"
	ln -s "$NVMET/subsystems/$NQN" "$NVMET/ports/1/subsystems/$NQN"
	dmesg | grep -q "nvmet_rdma: enabling port 1 ($ip:4420)" ||
		{ dmesg | tail -n5; fail "nvmet-rdma did not enable its port"; }

	tx0=$(counter sent_pkts) rx0=$(counter rcvd_pkts)
	declare -A drops0
	for c in rcvd_malformed rcvd_icrc_err rcvd_bad_opcode rcvd_not_from_peer rcvd_pkey_mismatch; do
		drops0[$c]=$(counter "$c")
	done
	nvme discover -t rdma -a "$ip" -s 4420 | tee /tmp/discover.txt
	grep -q "subnqn: *$NQN" /tmp/discover.txt || fail "discovery log does not list $NQN"
	nvme_connect "$ip"
	dev=$(nvme_ns_dev)
	fio_verify "$dev" 4k 1 w4k_qd1
	fio_verify "$dev" 4k 32 w4k_qd32
	fio_verify "$dev" 128k 32 w128k_qd32
	fio_verify "$dev" 1m 32 w1m_qd32

	# a pattern written before the disconnect reads back after the reconnect
	pattern_write "$dev"
	nvme disconnect -n "$NQN" | tee /tmp/disc.txt
	grep -q "disconnected 1 controller" /tmp/disc.txt || fail "disconnect did not report one controller"
	wait_for 20 bash -c "! ls /sys/class/nvme/ 2>/dev/null | grep -q ." || true
	nvme_ns_dev >/dev/null && fail "namespace still present after disconnect"
	nvme_connect "$ip"
	dev=$(nvme_ns_dev)
	pattern_check "$dev" "data written before the disconnect differs after the reconnect"
	info "4 MiB pattern intact across disconnect/reconnect"
	nvme disconnect -n "$NQN" >/dev/null

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
	nvme_cleanup
	grep -q "Memory registrations not supported" <(dmesg_since "$mark") && fail "host refused the device for fast registration"
	assert_dmesg_clean "$mark"
}

# ---------------------------------------------------------------------------
# NFS over RDMA: knfsd exporting a tmpfs, listening on rdma port 20049; the
# client mounts with -o rdma.

NFS_EXPORT=/srv/sroce-nfs
NFS_MNT=/mnt/sroce-nfs

nfs_cleanup() {
	umount -f "$NFS_MNT" 2>/dev/null || true
	rpc.nfsd 0 2>/dev/null || true
	exportfs -ua 2>/dev/null || true
	pkill -x rpc.mountd 2>/dev/null || true
	umount "$NFS_EXPORT" 2>/dev/null || true
	true
}

# A tree of files of mixed sizes (0 B .. 3 MiB).
nfs_make_tree() {
	local dir=$1 i sz
	mkdir -p "$dir/sub/deeper"
	for sz in 0 1 100 1023 1024 1025 4095 4096 4097 65535 65536 131072 1000000 3145728; do
		for i in 1 2; do
			head -c "$sz" /dev/urandom >"$dir/f_${sz}_$i"
		done
	done
	for i in $(seq 1 40); do
		head -c $((RANDOM * 3)) /dev/urandom >"$dir/sub/s$i"
		head -c $((RANDOM % 5000)) /dev/urandom >"$dir/sub/deeper/d$i"
	done
}

tree_sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

# /proc/self/mountstats of our mount only.
nfs_stats() {
	awk -v m=" $NFS_MNT " '/^device / { on = index($0, m) > 0 } on' /proc/self/mountstats
}

nfs_mount() {
	local ip=$1
	mount -t nfs -o rdma,port=20049,vers=4.2 "$ip:/" "$NFS_MNT" ||
		fail "mount -o rdma,port=20049 failed: $(dmesg | grep -iE 'rpcrdma|svcrdma|nfs|sroce' | tail -n3 | tr '\n' ' ')"
	nfs_stats >/tmp/nfs-stats.txt
	if ! grep -q "proto=rdma" /tmp/nfs-stats.txt || ! grep -q "xprt:[[:space:]]*rdma" /tmp/nfs-stats.txt; then
		cat /tmp/nfs-stats.txt
		fail "the mount does not use the rdma transport"
	fi
}

t_nfs() {
	# the file exists twice in the guest's 2 GiB (its /tmp and the export)
	local ip mark big=$((ULP_SIZE_MB * 4 > 256 ? 256 : ULP_SIZE_MB * 4)) sum
	ensure_link
	ip=$(my_ip)
	mark="nfs-$$"
	dmesg_mark "$mark"
	nfs_cleanup
	command -v rpc.nfsd >/dev/null || fail "nfs-kernel-server is not installed (scripts/deps)"
	mkdir -p "$NFS_EXPORT" "$NFS_MNT" /run/rpcbind /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery
	mount -t tmpfs -o size=$((big + 64))m tmpfs "$NFS_EXPORT"
	"$MODPROBE" nfsd
	"$MODPROBE" rpcrdma
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	mountpoint -q /var/lib/nfs/rpc_pipefs || mount -t rpc_pipefs sunrpc /var/lib/nfs/rpc_pipefs
	pgrep -x rpcbind >/dev/null || rpcbind -w
	: >/etc/exports
	# the export is the NFSv4 root (fsid=0): the guest's own root (overlay on
	# 9p) cannot be exported, so no pseudo-root above it
	exportfs -o rw,no_root_squash,no_subtree_check,insecure,fsid=0 "*:$NFS_EXPORT"
	rpc.mountd
	# NFSv4 opens wait out the grace period after a start: keep it short
	echo 10 >/proc/fs/nfsd/nfsv4leasetime
	[[ -w /proc/fs/nfsd/nfsv4gracetime ]] && echo 10 >/proc/fs/nfsd/nfsv4gracetime
	rpc.nfsd -N 3 8 || fail "rpc.nfsd failed"
	echo "rdma 20049" >/proc/fs/nfsd/portlist || fail "knfsd does not take 'rdma 20049'"
	grep -q "rdma 20049" /proc/fs/nfsd/portlist || { cat /proc/fs/nfsd/portlist; fail "knfsd is not listening on rdma 20049"; }

	nfs_mount "$ip"
	nfs_make_tree /tmp/nfs-src
	cp -a /tmp/nfs-src/. "$NFS_MNT/"
	sync
	tree_sums /tmp/nfs-src >/tmp/nfs-src.sums
	[[ $(tree_sums "$NFS_MNT") == "$(cat /tmp/nfs-src.sums)" ]] || fail "tree differs right after the copy"
	# large sequential file, O_DIRECT both ways
	dd if=/dev/urandom of=/tmp/nfs-big bs=1M count="$big" status=none
	sum=$(sha256sum </tmp/nfs-big)
	dd if=/tmp/nfs-big of="$NFS_MNT/big" bs=1M oflag=direct status=none || fail "O_DIRECT write of $big MiB failed"
	umount "$NFS_MNT"
	# the server's copy, then the client's after a remount
	[[ $(tree_sums "$NFS_EXPORT" | grep -v ' ./big$') == "$(cat /tmp/nfs-src.sums)" ]] ||
		fail "the server's tree differs from what the client wrote"
	[[ $(sha256sum <"$NFS_EXPORT/big") == "$sum" ]] || fail "the server's copy of big differs"
	nfs_mount "$ip"
	[[ $(tree_sums "$NFS_MNT" | grep -v ' ./big$') == "$(cat /tmp/nfs-src.sums)" ]] || fail "tree differs after the remount"
	[[ $(dd if="$NFS_MNT/big" bs=1M iflag=direct status=none | sha256sum) == "$sum" ]] ||
		fail "O_DIRECT read of big differs after the remount"
	info "$(wc -l </tmp/nfs-src.sums) files and a $big MiB O_DIRECT file intact across unmount/remount"
	nfs_stats | grep -m1 "xprt:" | sed 's/^/    /'
	umount "$NFS_MNT"
	nfs_cleanup
	assert_dmesg_clean "$mark"
}

# ---------------------------------------------------------------------------
# iSER: a LIO target (configfs) with iSER enabled on its portal, the
# open-iscsi initiator on an iface with transport_name iser.

ISER_IQN=iqn.2026-12.io.sroce:ulp-iser

iser_session_dev() {
	local s
	for s in /sys/class/iscsi_session/session*; do
		[[ $(cat "$s/targetname" 2>/dev/null) == "$ISER_IQN" ]] || continue
		scsi_disk_of "$s/device" && return 0
	done
	return 1
}

iser_cleanup() {
	local tpg=$LIO/iscsi/$ISER_IQN/tpgt_1 np
	iscsiadm -m node -T "$ISER_IQN" --logout >/dev/null 2>&1 || true
	iscsiadm -m node -T "$ISER_IQN" -o delete >/dev/null 2>&1 || true
	if [[ -d $tpg ]]; then
		echo 0 >"$tpg/enable" 2>/dev/null || true
		for np in "$tpg"/np/*; do
			[[ -d $np ]] && { rmdir "$np" 2>/dev/null || true; }
		done
		rm -f "$tpg"/lun/lun_0/iser_rd 2>/dev/null || true
		rmdir "$tpg/lun/lun_0" "$tpg" "$LIO/iscsi/$ISER_IQN" 2>/dev/null || true
	fi
	if [[ -d $LIO/core/rd_mcp_78/iser_rd ]]; then
		rmdir "$LIO/core/rd_mcp_78/iser_rd" "$LIO/core/rd_mcp_78" 2>/dev/null || true
	fi
	pkill -x iscsid 2>/dev/null || true
	true
}

t_iser() {
	local ip mark dev tpg rd
	ensure_link
	ip=$(my_ip)
	mark="iser-$$"
	dmesg_mark "$mark"
	command -v iscsiadm >/dev/null || fail "open-iscsi is not installed (scripts/deps)"
	iser_cleanup
	configfs_up
	"$MODPROBE" target_core_mod
	"$MODPROBE" iscsi_target_mod
	"$MODPROBE" ib_isert || fail "modprobe ib_isert"
	"$MODPROBE" ib_iser || fail "modprobe ib_iser"
	"$MODPROBE" sd_mod
	# what targetcli writes, written directly (targetcli-fb cannot run
	# without a system D-Bus, which the test guest has not)
	rd=$LIO/core/rd_mcp_78/iser_rd
	mkdir -p "$rd"
	echo "rd_pages=$(( (ULP_SIZE_MB + 16) * 256 ))" >"$rd/control"
	echo 1 >"$rd/enable"
	tpg=$LIO/iscsi/$ISER_IQN/tpgt_1
	mkdir -p "$tpg/lun/lun_0"
	ln -s "$rd" "$tpg/lun/lun_0/iser_rd"
	mkdir "$tpg/np/$ip:3260"
	echo 1 >"$tpg/np/$ip:3260/iser" || fail "the portal does not take iSER"
	echo 0 >"$tpg/attrib/authentication"
	echo 1 >"$tpg/attrib/generate_node_acls"
	echo 1 >"$tpg/attrib/cache_dynamic_acls"
	echo 0 >"$tpg/attrib/demo_mode_write_protect"
	echo 1 >"$tpg/enable"
	[[ $(cat "$tpg/np/$ip:3260/iser") == 1 ]] || fail "iSER is not enabled on $ip:3260"

	mkdir -p /etc/iscsi /run/lock/iscsi /var/lib/iscsi
	[[ -s /etc/iscsi/initiatorname.iscsi ]] ||
		echo "InitiatorName=iqn.2026-12.io.sroce:host" >/etc/iscsi/initiatorname.iscsi
	iscsid || fail "iscsid did not start"
	iscsiadm -m iface -I iser0 -o new >/dev/null 2>&1 || true
	iscsiadm -m iface -I iser0 -o update -n iface.transport_name -v iser
	iscsiadm -m discovery -t st -p "$ip:3260" -I iser0 | tee /tmp/iser-disc.txt
	grep -q "$ISER_IQN" /tmp/iser-disc.txt || fail "discovery does not list $ISER_IQN"
	iscsiadm -m node -T "$ISER_IQN" -p "$ip:3260" -I iser0 --login ||
		fail "iSER login failed: $(dmesg | grep -iE 'iser|sroce' | tail -n3 | tr '\n' ' ')"
	iscsiadm -m session -P 1 | grep -E "Target:|Iface Transport|iSCSI Session State" | sed 's/^/    /'
	iscsiadm -m session -P 1 | grep -q "Iface Transport: iser" || fail "the session is not on the iser transport"
	wait_for 30 iser_session_dev || fail "no SCSI disk for the iSER session"
	dev=$(iser_session_dev)
	info "iSER session disk: $dev"
	fio_verify "$dev" 4k 32 iser_w4k_qd32
	fio_verify "$dev" 128k 32 iser_w128k_qd32
	pattern_write "$dev"
	iscsiadm -m node -T "$ISER_IQN" -p "$ip:3260" --logout || fail "logout failed"
	wait_for 20 bash -c "! iscsiadm -m session >/dev/null 2>&1" || fail "session still there after logout"
	iscsiadm -m node -T "$ISER_IQN" -p "$ip:3260" -I iser0 --login || fail "second login failed"
	wait_for 30 iser_session_dev || fail "no SCSI disk after the second login"
	dev=$(iser_session_dev)
	pattern_check "$dev" "data written before the logout differs after the second login"
	info "4 MiB pattern intact across logout/login"
	iser_cleanup
	assert_dmesg_clean "$mark"
}

# ---------------------------------------------------------------------------
# SRP: ib_srpt (LIO, set up through configfs) listening on rdma_cm, ib_srp
# logging in over rdma_cm (RoCE has no subnet manager); fast registration,
# never the unsafe global rkey.

SRP_CM_PORT=5000

srp_host_dev() {
	local h
	for h in /sys/class/scsi_host/host*; do
		[[ $(cat "$h/proc_name" 2>/dev/null) == ib_srp ]] || continue
		scsi_disk_of "$h/device" && return 0
	done
	return 1
}

srp_logout() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[[ -e $p/delete ]] && echo 1 >"$p/delete"
	done
	wait_for 20 bash -c "! ls /sys/class/srp_remote_ports/ 2>/dev/null | grep -q ." || true
}

srp_cleanup() {
	local w
	srp_logout
	for w in "$LIO"/srpt/*/tpgt_1; do
		[[ -d $w ]] || continue
		echo 0 >"$w/enable" 2>/dev/null || true
		find "$w/acls" -mindepth 3 -maxdepth 3 -type l -delete 2>/dev/null || true
		find "$w/acls" -mindepth 2 -maxdepth 2 -type d -exec rmdir {} + 2>/dev/null || true
		find "$w/acls" -mindepth 1 -maxdepth 1 -type d -exec rmdir {} + 2>/dev/null || true
		find "$w/lun" -mindepth 2 -maxdepth 2 -type l -delete 2>/dev/null || true
		find "$w/lun" -mindepth 1 -maxdepth 1 -type d -exec rmdir {} + 2>/dev/null || true
		rmdir "$w" "$(dirname "$w")" 2>/dev/null || true
	done
	if [[ -d $LIO/core/rd_mcp_77/srp_rd ]]; then
		rmdir "$LIO/core/rd_mcp_77/srp_rd" "$LIO/core/rd_mcp_77" 2>/dev/null || true
	fi
	true
}

t_srp() {
	local ip mark guid sguid w rd hostdir dev
	ensure_link
	ip=$(my_ip)
	mark="srp-$$"
	dmesg_mark "$mark"
	configfs_up
	"$MODPROBE" target_core_mod
	"$MODPROBE" ib_srpt || fail "modprobe ib_srpt"
	"$MODPROBE" ib_srp || fail "modprobe ib_srp"
	"$MODPROBE" sd_mod
	srp_cleanup
	# the target port is named after the interface ID of GID 0
	guid=$(cut -c21- "$(ib_dir)/ports/1/gids/0")
	# both halves of the SRP target port ID are srpt's service GUID, the node GUID
	sguid=$(tr -d : <"$(ib_dir)/node_guid")
	rd=$LIO/core/rd_mcp_77/srp_rd
	mkdir -p "$rd"
	echo "rd_pages=$(( (ULP_SIZE_MB + 16) * 256 ))" >"$rd/control"
	echo 1 >"$rd/enable"
	w=$LIO/srpt/$guid/tpgt_1
	mkdir -p "$w/lun/lun_0" || fail "srpt has no target port $guid"
	ln -s "$rd" "$w/lun/lun_0/srp_rd"
	# an rdma_cm login is named after the initiator's IP address
	mkdir -p "$w/acls/$ip/lun_0"
	ln -s "$w/lun/lun_0" "$w/acls/$ip/lun_0/lun_0"
	echo 1 >"$w/enable"
	echo "$SRP_CM_PORT" >"$LIO/srpt/discovery_auth/rdma_cm_port"
	info "srpt: port $guid, service GUID $sguid, rdma_cm port $(cat "$LIO/srpt/discovery_auth/rdma_cm_port")"

	hostdir=/sys/class/infiniband_srp/srp-$DEV-1
	[[ -w $hostdir/add_target ]] || fail "$hostdir/add_target missing"
	echo "id_ext=$sguid,ioc_guid=$sguid,dest=$ip:$SRP_CM_PORT,max_cmd_per_lun=32" >"$hostdir/add_target" ||
		fail "SRP login failed: $(dmesg | grep -iE 'srp|sroce' | tail -n3 | tr '\n' ' ')"
	wait_for 30 srp_host_dev || fail "no SCSI disk for the SRP login"
	dev=$(srp_host_dev)
	info "SRP disk: $dev"
	fio_verify "$dev" 4k 32 srp_w4k_qd32
	fio_verify "$dev" 128k 32 srp_w128k_qd32
	pattern_write "$dev"
	srp_logout
	srp_host_dev >/dev/null && fail "SRP disk still present after logout"
	echo "id_ext=$sguid,ioc_guid=$sguid,dest=$ip:$SRP_CM_PORT,max_cmd_per_lun=32" >"$hostdir/add_target" ||
		fail "second SRP login failed"
	wait_for 30 srp_host_dev || fail "no SCSI disk after the second login"
	dev=$(srp_host_dev)
	pattern_check "$dev" "data written before the logout differs after the second login"
	info "4 MiB pattern intact across logout/login"
	dmesg_since "$mark" | grep -iE "global rkey|unsafe" && fail "ib_srp fell back to the global rkey"
	srp_cleanup
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
