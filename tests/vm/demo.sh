#!/bin/bash
# `make demo`, guest side: bring up the soft-RoCE device on eth0 and run
# ibv_rc_pingpong and ib_write_bw over it (loopback inside the VM).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=${SVM_REPO:-$(cd "$HERE/../.." && pwd)}
. "$HERE/lib.sh"
set -e
SROCE_DRV=${SROCE_DRV:-sroce}
case $SROCE_DRV in
sroce)
	MOD=sroce LTYPE=sroce DEV=sroce0 KO=${SROCE_KO:-$REPO/sroce.ko}
	[[ -n ${SROCE_KO:-} || ! -f $REPO/build/modules/$(uname -r)/sroce.ko ]] || KO=$REPO/build/modules/$(uname -r)/sroce.ko
	mkdir -p "/lib/modules/$(uname -r)/extra"
	cp "$KO" "/lib/modules/$(uname -r)/extra/"
	if [[ -n ${SROCE_MODINDEX:-} && -f $SROCE_MODINDEX/modules.dep.bin ]]; then
		cp "$SROCE_MODINDEX"/modules.* "/lib/modules/$(uname -r)/"
	else
		depmod -a
	fi
	;;
rxe) MOD=rdma_rxe LTYPE=rxe DEV=rxe0 ;;
esac
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

say "modprobe $MOD"; "$MODPROBE" "$MOD"
say "rdma link add $DEV type $LTYPE netdev eth0"; "$RDMA" link add "$DEV" type "$LTYPE" netdev eth0
say "rdma link show"; "$RDMA" link show
sleep 1
gidx=
for g in /sys/class/infiniband/$DEV/ports/1/gids/*; do
	i=${g##*/}
	[[ $(cat "/sys/class/infiniband/$DEV/ports/1/gid_attrs/types/$i" 2>/dev/null) == "RoCE v2" ]] || continue
	[[ $(cat "$g") == 0000:0000:0000:0000:0000:ffff:* ]] && { gidx=$i; break; }
done
say "ibv_devinfo -d $DEV"; ibv_devinfo -d "$DEV"
echo "RoCE v2 IPv4 GID index: $gidx ($(cat "/sys/class/infiniband/$DEV/ports/1/gids/$gidx"))"

say "ibv_rc_pingpong -d $DEV -g $gidx -c -n 100   (server)  &  ibv_rc_pingpong ... 127.0.0.1   (client)"
ibv_rc_pingpong -d "$DEV" -g "$gidx" -c -n 100 -p 18515 | sed 's/^/[server] /' &
wait_port 18515 30
ibv_rc_pingpong -d "$DEV" -g "$gidx" -c -n 100 -p 18515 127.0.0.1 | sed 's/^/[client] /'
wait

say "ib_write_bw -d $DEV -x $gidx -s 65536 -n 200 -F   (server)  &  ib_write_bw ... 127.0.0.1   (client)"
ib_write_bw -d "$DEV" -x "$gidx" -s 65536 -n 200 -F -p 18600 >/tmp/wbw-server.txt 2>&1 &
wait_port 18600 30
ib_write_bw -d "$DEV" -x "$gidx" -s 65536 -n 200 -F -p 18600 127.0.0.1
wait
say "rdma link delete $DEV; modprobe -r $MOD"
"$RDMA" link delete "$DEV"
"$MODPROBE" -r "$MOD"
echo "demo done."
