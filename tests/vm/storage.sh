# shellcheck shell=bash
# The kernel storage clients' target and host halves, sourced by the ulp
# suites (ulp.sh: both halves on one device; ulp-pair.sh: target on guest A,
# host on guest B). Needs lib.sh and the device (DEV, NETDEV) selected.
# ULP_SIZE_MB (default 16) bounds what each fio job writes; ULP_FULL=1 is
# the long form (256 MiB per job).
ULP_FULL=${ULP_FULL:-0}
ULP_SIZE_MB=${ULP_SIZE_MB:-$( ((ULP_FULL)) && echo 256 || echo 16)}
ULP_NVME_QUEUES=${ULP_NVME_QUEUES:-2}
# the queue-depth-1 job alone: across two TCG guests a round trip takes
# ~25 ms, 4 KiB at a time
ULP_QD1_MB=${ULP_QD1_MB:-$ULP_SIZE_MB}
NQN=nqn.2026-12.io.sroce:ulp-nvme
NVMET=/sys/kernel/config/nvmet
LIO=/sys/kernel/config/target

# sroce's counters around one test: the I/O must show in sent_pkts, and no
# packet may be dropped as malformed, corrupt or foreign (rdma_rxe: nothing
# to check).
DROP_COUNTERS="rcvd_malformed rcvd_icrc_err rcvd_bad_opcode rcvd_not_from_peer rcvd_pkey_mismatch"
cnt_is_sroce() { [[ ${DRV:-${SROCE_DRV:-sroce}} == sroce ]]; }
cnt_begin() {
	local c
	cnt_is_sroce || return 0
	for c in sent_pkts $DROP_COUNTERS; do echo "$c $(counter "$c")"; done >/tmp/ulp-cnt0
}
cnt_check() { # MIN_SENT
	local c v0 v bad=
	cnt_is_sroce || return 0
	while read -r c v0; do
		v=$(counter "$c")
		if [[ $c == sent_pkts ]]; then
			info "sroce sent $((v - v0)) packets"
			((v - v0 >= $1)) || fail "sroce sent $((v - v0)) packets, fewer than the I/O needs ($1)"
		elif ((v != v0)); then
			bad+=" $c+$((v - v0))"
		fi
	done </tmp/ulp-cnt0
	[[ -z $bad ]] || fail "drop counters moved:$bad"
}
# Packets that MB MiB of payload needs at the device's active MTU: a lower
# bound on what one side sends when the data crosses once each way (the
# host sends what it writes, as RDMA READ responses or SENDs; the target
# what the host reads back, as RDMA WRITEs).
pkts_for() { # MB
	local mtu
	mtu=$(ibv_devinfo -d "$DEV" | awk '/active_mtu/ { print $2; exit }')
	[[ $mtu =~ ^[0-9]+$ ]] || mtu=4096
	echo $(($1 * 1048576 / mtu))
}

configfs_up() {
	"$MODPROBE" configfs
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
}

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

# Every port and subsystem (the test guest has only ours).
nvmet_teardown() {
	local p n
	[[ -d $NVMET ]] || return 0
	for p in "$NVMET"/ports/*; do
		[[ -d $p ]] || continue
		find "$p/subsystems" -mindepth 1 -maxdepth 1 -type l -delete 2>/dev/null || true
		rmdir "$p" 2>/dev/null || true
	done
	for n in "$NVMET"/subsystems/*; do
		[[ -d $n ]] || continue
		echo 0 >"$n/namespaces/1/enable" 2>/dev/null || true
		rmdir "$n/namespaces/1" "$n" 2>/dev/null || true
	done
	true
}

nvme_connect() { # IP [nvme connect options]
	local ip=$1 dev
	shift
	nvme connect -t rdma -a "$ip" -s 4420 -n "$NQN" -i "$ULP_NVME_QUEUES" "$@" ||
		fail "nvme connect -t rdma -a $ip failed: $(dmesg | grep -E 'nvme|sroce' | tail -n3 | tr '\n' ' ')"
	wait_for 30 nvme_ns_dev || fail "no namespace block device after connect"
	dev=$(nvme_ns_dev)
	info "connected: $(nvme_ctrl_of_nqn) -> $dev ($(cat /sys/class/nvme/"$(nvme_ctrl_of_nqn)"/transport))"
	[[ $(cat /sys/class/nvme/"$(nvme_ctrl_of_nqn)"/transport) == rdma ]] || fail "controller transport is not rdma"
}

# fio job writing a crc32c-verified pattern over the whole of SIZE; every
# block is read back and checked in the same job.
fio_verify() { # DEV BS IODEPTH NAME [SIZE_MB]
	local dev=$1 bs=$2 qd=$3 name=$4 mb=${5:-$ULP_SIZE_MB} out=/tmp/fio-$4.txt
	fio --name="$name" --filename="$dev" --direct=1 --ioengine=libaio \
		--rw=randwrite --bs="$bs" --iodepth="$qd" --size="${mb}M" \
		--verify=crc32c --verify_fatal=1 --do_verify=1 --randrepeat=0 \
		--output="$out" ||
		{ cat "$out"; fail "fio $name failed (bs $bs, iodepth $qd)"; }
	grep -E 'err=|WRITE:|READ:' "$out" | sed 's/^/    /'
	grep -q 'err= 0' "$out" || { cat "$out"; fail "fio $name reported an error"; }
	grep -qE 'verify: bad|crc32c: verify failed' "$out" && fail "fio $name: verify failure"
	true
}

# nvmet on IP:4420 exporting a brd ramdisk of ULP_SIZE_MB + 16 MiB.
nvmet_up() {
	local ip=$1
	nvmet_teardown
	"$MODPROBE" -r brd 2>/dev/null || true
	"$MODPROBE" brd rd_nr=1 rd_size=$(( (ULP_SIZE_MB + 16) * 1024 )) max_part=0 || fail "modprobe brd"
	"$MODPROBE" nvmet || fail "modprobe nvmet"
	"$MODPROBE" nvmet-rdma || fail "modprobe nvmet-rdma"
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
	dmesg_mark "nvmet-up-$$"
	ln -s "$NVMET/subsystems/$NQN" "$NVMET/ports/1/subsystems/$NQN"
	dmesg_since "nvmet-up-$$" | grep -F "nvmet_rdma: enabling port 1 ($ip:4420)" >/dev/null ||
		{ dmesg | tail -n5; fail "nvmet-rdma did not enable its port"; }
}
nvmet_down() {
	nvmet_teardown
	"$MODPROBE" -r nvmet_rdma nvmet 2>/dev/null || true
	"$MODPROBE" -r brd 2>/dev/null || true
	true
}
nvme_host_down() {
	nvme disconnect -n "$NQN" >/dev/null 2>&1 || true
	"$MODPROBE" -r nvme_rdma nvme_fabrics 2>/dev/null || true
	true
}

# The host's part: discovery, fio verify at 4 KiB (qd 1, 32), 128 KiB and
# 1 MiB, then a pattern across disconnect/reconnect.
nvme_host_run() {
	local ip=$1 dev
	"$MODPROBE" nvme-rdma || fail "modprobe nvme-rdma"
	nvme discover -t rdma -a "$ip" -s 4420 | tee /tmp/discover.txt
	grep -q "subnqn: *$NQN" /tmp/discover.txt || fail "discovery log does not list $NQN"
	nvme_connect "$ip"
	dev=$(nvme_ns_dev)
	fio_verify "$dev" 4k 1 w4k_qd1 "$ULP_QD1_MB"
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
}

# ---------------------------------------------------------------------------
# NFS over RDMA: knfsd exporting a tmpfs, listening on rdma port 20049; the
# client mounts with -o rdma.

NFS_EXPORT=/srv/sroce-nfs
NFS_MNT=/mnt/sroce-nfs
NFS_BIG_MB=$((ULP_SIZE_MB * 4 > 256 ? 256 : ULP_SIZE_MB * 4))

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

# The server: knfsd exporting a tmpfs as the NFSv4 root, on rdma 20049.
nfs_server_up() {
	nfs_server_down
	command -v rpc.nfsd >/dev/null || fail "nfs-kernel-server is not installed (scripts/deps)"
	mkdir -p "$NFS_EXPORT" /run/rpcbind /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery
	# the big file lives twice in a single guest's 2 GiB (its /tmp and here)
	mount -t tmpfs -o size=$((NFS_BIG_MB + 64))m tmpfs "$NFS_EXPORT"
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
}
nfs_server_down() {
	rpc.nfsd 0 2>/dev/null || true
	exportfs -ua 2>/dev/null || true
	pkill -x rpc.mountd 2>/dev/null || true
	umount "$NFS_EXPORT" 2>/dev/null || true
	true
}
# The server's copy must be what the client wrote: the tree's sums in file
# $1, the big file's sum $2.
nfs_server_check() {
	[[ $(tree_sums "$NFS_EXPORT" | grep -v ' ./big$') == "$(cat "$1")" ]] ||
		fail "the server's tree differs from what the client wrote"
	[[ $(sha256sum <"$NFS_EXPORT/big") == "$2" ]] || fail "the server's copy of big differs"
	info "the server has the client's $(wc -l <"$1") files and big"
}

# The client, first mount: the tree and an O_DIRECT big file, checked over
# the mount; leaves the sums in /tmp/nfs-src.sums and /tmp/nfs-big.sum.
nfs_client_write() {
	local ip=$1
	nfs_client_down
	mkdir -p "$NFS_MNT"
	nfs_mount "$ip"
	rm -rf /tmp/nfs-src
	nfs_make_tree /tmp/nfs-src
	cp -a /tmp/nfs-src/. "$NFS_MNT/"
	sync
	tree_sums /tmp/nfs-src >/tmp/nfs-src.sums
	[[ $(tree_sums "$NFS_MNT") == "$(cat /tmp/nfs-src.sums)" ]] || fail "tree differs right after the copy"
	# large sequential file, O_DIRECT both ways
	dd if=/dev/urandom of=/tmp/nfs-big bs=1M count="$NFS_BIG_MB" status=none
	sha256sum </tmp/nfs-big >/tmp/nfs-big.sum
	dd if=/tmp/nfs-big of="$NFS_MNT/big" bs=1M oflag=direct status=none || fail "O_DIRECT write of $NFS_BIG_MB MiB failed"
	rm -f /tmp/nfs-big
	umount "$NFS_MNT"
}
# The client, after a remount: everything reads back.
nfs_client_reread() {
	local ip=$1
	nfs_mount "$ip"
	[[ $(tree_sums "$NFS_MNT" | grep -v ' ./big$') == "$(cat /tmp/nfs-src.sums)" ]] || fail "tree differs after the remount"
	[[ $(dd if="$NFS_MNT/big" bs=1M iflag=direct status=none | sha256sum) == "$(cat /tmp/nfs-big.sum)" ]] ||
		fail "O_DIRECT read of big differs after the remount"
	info "$(wc -l </tmp/nfs-src.sums) files and a $NFS_BIG_MB MiB O_DIRECT file intact across unmount/remount"
	nfs_stats | grep -m1 "xprt:" | sed 's/^/    /'
	umount "$NFS_MNT"
}
nfs_client_down() {
	umount -f "$NFS_MNT" 2>/dev/null || true
	true
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

# The target: LIO with a ramdisk LUN and iSER on its portal IP:3260.
iser_target_up() {
	local ip=$1 tpg rd
	iser_target_down
	configfs_up
	"$MODPROBE" target_core_mod
	"$MODPROBE" iscsi_target_mod
	"$MODPROBE" ib_isert || fail "modprobe ib_isert"
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
}
iser_target_down() {
	local tpg=$LIO/iscsi/$ISER_IQN/tpgt_1 np
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
	true
}

# The initiator: open-iscsi on an iser iface; login, fio verify, a pattern
# across logout/login, logout.
iser_host_run() {
	local ip=$1 dev
	command -v iscsiadm >/dev/null || fail "open-iscsi is not installed (scripts/deps)"
	iser_host_down
	"$MODPROBE" ib_iser || fail "modprobe ib_iser"
	"$MODPROBE" sd_mod
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
	iscsiadm -m node -T "$ISER_IQN" -p "$ip:3260" --logout >/dev/null || fail "last logout failed"
}
iser_host_down() {
	iscsiadm -m node -T "$ISER_IQN" --logout >/dev/null 2>&1 || true
	iscsiadm -m node -T "$ISER_IQN" -o delete >/dev/null 2>&1 || true
	pkill -x iscsid 2>/dev/null || true
	true
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

# The initiator port ID ib_srp logs in with: an ID extension of 0, then
# the interface ID of the initiator's GID 0.
srp_initiator_port_id() {
	echo "0x0000000000000000$(cut -c21- "$(ib_dir)/ports/1/gids/0" | tr -d :)"
}
# The target: ib_srpt with a ramdisk LUN and logins on rdma_cm port 5000.
# Its port is named after GID 0 in full, so srpt matches a login's ACL
# against the initiator port ID $1 (srp_initiator_port_id on the host): on
# the port named after the interface ID alone, srpt names an rdma_cm login
# after the address the request arrived at, the target's own, for every
# initiator. SRP_SGUID: the service GUID (srpt's node GUID) that the
# initiator names.
SRP_SGUID=
srpt_up() {
	local i_port_id=$1 port sguid w rd
	configfs_up
	"$MODPROBE" target_core_mod
	"$MODPROBE" ib_srpt || fail "modprobe ib_srpt"
	srpt_down
	port=0x$(tr -d : <"$(ib_dir)/ports/1/gids/0")
	sguid=$(tr -d : <"$(ib_dir)/node_guid")
	rd=$LIO/core/rd_mcp_77/srp_rd
	mkdir -p "$rd"
	echo "rd_pages=$(( (ULP_SIZE_MB + 16) * 256 ))" >"$rd/control"
	echo 1 >"$rd/enable"
	w=$LIO/srpt/$port/tpgt_1
	mkdir -p "$w/lun/lun_0" || fail "srpt has no target port $port"
	ln -s "$rd" "$w/lun/lun_0/srp_rd"
	mkdir -p "$w/acls/$i_port_id/lun_0"
	ln -s "$w/lun/lun_0" "$w/acls/$i_port_id/lun_0/lun_0"
	echo 1 >"$w/enable"
	echo "$SRP_CM_PORT" >"$LIO/srpt/discovery_auth/rdma_cm_port"
	info "srpt: port $port, ACL $i_port_id, service GUID $sguid, rdma_cm port $(cat "$LIO/srpt/discovery_auth/rdma_cm_port")"
	# shellcheck disable=SC2034 # read by the suites
	SRP_SGUID=$sguid
}
srpt_down() {
	local w
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

# One add_target.  ib_srp drops a logged-out target from its list only
# after the remote port has left sysfs and its QPs are destroyed; until
# then a new login to the same target is refused with EEXIST: retry.
srp_login() { # HOSTDIR IP SGUID
	local i err
	for ((i = 0; i < 30; i++)); do
		err=$( { echo "id_ext=$3,ioc_guid=$3,dest=$2:$SRP_CM_PORT,max_cmd_per_lun=32" >"$1/add_target"; } 2>&1) &&
			return 0
		[[ $err == *"File exists"* ]] || { echo "$err"; return 1; }
		sleep 1
	done
	echo "$err"
	return 1
}

# The initiator: ib_srp logs in to the target at $1 (service GUID $2) over
# rdma_cm; fio verify, a pattern across logout/login, logout.
srp_host_run() {
	local ip=$1 sguid=$2 hostdir dev mark=srp-host-$$
	dmesg_mark "$mark"
	"$MODPROBE" ib_srp || fail "modprobe ib_srp"
	"$MODPROBE" sd_mod
	srp_logout
	hostdir=/sys/class/infiniband_srp/srp-$DEV-1
	[[ -w $hostdir/add_target ]] || fail "$hostdir/add_target missing"
	srp_login "$hostdir" "$ip" "$sguid" ||
		fail "SRP login failed: $(dmesg | grep -iE 'srp|sroce' | tail -n3 | tr '\n' ' ')"
	wait_for 30 srp_host_dev || fail "no SCSI disk for the SRP login"
	dev=$(srp_host_dev)
	info "SRP disk: $dev"
	fio_verify "$dev" 4k 32 srp_w4k_qd32
	fio_verify "$dev" 128k 32 srp_w128k_qd32
	pattern_write "$dev"
	srp_logout
	srp_host_dev >/dev/null && fail "SRP disk still present after logout"
	srp_login "$hostdir" "$ip" "$sguid" || fail "second SRP login failed"
	wait_for 30 srp_host_dev || fail "no SCSI disk after the second login"
	dev=$(srp_host_dev)
	pattern_check "$dev" "data written before the logout differs after the second login"
	info "4 MiB pattern intact across logout/login"
	srp_logout
	dmesg_since "$mark" | grep -iE "global rkey|unsafe" && fail "ib_srp fell back to the global rkey"
	true
}
