# shellcheck shell=bash
# Helpers for guest-side VM tests (sourced by tests/vm/*.sh inside the VM).
#
#   run_test NAME TIMEOUT_SECS FUNC [ARGS...]
#       Runs FUNC in its own process group with a timeout. Output goes to
#       /results/tests/NAME.log, then (indented) to stdout. The test passes iff FUNC
#       returns 0 (it runs with `set -e`-like strictness: use `fail "msg"`).
#       Leftover background processes of the test are killed afterwards.
#       Appends "PASS NAME (Ts)" or "FAIL NAME (Ts): reason" to /results/results.txt.
#   dmesg_mark TAG / dmesg_since TAG / dmesg_bad_since TAG
#       Write a marker into the kernel log / print kernel log lines after it /
#       print lines after it that match $DMESG_BAD_RE.
#   suite_begin NAME / suite_end
#       suite_end adds the final "dmesg" test (scan since suite_begin) and
#       returns non-zero if any test failed.
#   fail MSG, skip MSG (records SKIP NAME: MSG), info MSG,
#   wait_for SECS CMD..., wait_port PORT [SECS]

RESULTS=${RESULTS:-/results}
[[ -d $RESULTS && -w $RESULTS ]] || RESULTS=/tmp/results
mkdir -p "$RESULTS/tests"
RESULTS_TXT=$RESULTS/results.txt

DMESG_BAD_RE='BUG|WARNING|Oops|refcount|list_add corruption|list_del corruption|soft lockup|hung task|blocked for more than|general protection|KASAN|UBSAN|ODEBUG'

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
MODPROBE=/usr/sbin/modprobe; [[ -x $MODPROBE ]] || MODPROBE=/sbin/modprobe
IP=/usr/sbin/ip; [[ -x $IP ]] || IP=/usr/bin/ip; [[ -x $IP ]] || IP=/sbin/ip
RDMA=/usr/bin/rdma; [[ -x $RDMA ]] || RDMA=/usr/sbin/rdma; [[ -x $RDMA ]] || RDMA=/sbin/rdma
TC=/usr/sbin/tc; [[ -x $TC ]] || TC=/sbin/tc

# --- the device under test -------------------------------------------------------
# select_driver sroce|rxe sets MOD, LTYPE, DEV and, for sroce, KO: the module
# file ($SROCE_KO, else build/modules/<running kernel>/sroce.ko, else the
# tree's sroce.ko). The caller sets NETDEV, the netdev the device is bound to.
select_driver() {
	case $1 in
	sroce)
		MOD=sroce LTYPE=sroce DEV=sroce0 KO=${SROCE_KO:-}
		if [[ -z $KO ]]; then
			KO=$REPO/sroce.ko
			[[ -f $REPO/build/modules/$(uname -r)/sroce.ko ]] && KO=$REPO/build/modules/$(uname -r)/sroce.ko
		fi
		;;
	rxe) MOD=rdma_rxe LTYPE=rxe DEV=rxe0 KO= ;;
	*) echo "unknown driver '$1'" >&2; exit 2 ;;
	esac
}
# sroce's module into /lib/modules/<kver>/extra, indexed by the host-made
# depmod files in $SROCE_MODINDEX if given (depmod -a is slow under TCG).
install_module() {
	local extra
	[[ -n $KO ]] || return 0
	[[ -f $KO ]] || fail "module file $KO not found (build it first, or set SROCE_KO)"
	extra=/lib/modules/$(uname -r)/extra
	mkdir -p "$extra"
	cp "$KO" "$extra/"
	if [[ -n ${SROCE_MODINDEX:-} && -f $SROCE_MODINDEX/modules.dep.bin ]]; then
		info "installing host-made depmod indexes from $SROCE_MODINDEX"
		cp "$SROCE_MODINDEX"/modules.* "/lib/modules/$(uname -r)/"
	else
		info "depmod -a ($(basename "$KO") -> $extra; slow under TCG)"
		depmod -a
	fi
	modinfo "$MOD" | sed -n '1,/^vermagic/p'
}
ib_dir() { echo "/sys/class/infiniband/$DEV"; }
mod_loaded() { [[ -d /sys/module/$MOD ]]; }
link_present() { "$RDMA" link show 2>/dev/null | grep -qE "^link $DEV/1 .*netdev $NETDEV( |\$)"; }
my_ip() { "$IP" -4 -o addr show dev "$NETDEV" | awk '{ print $4 }' | cut -d/ -f1 | head -n1; }
# sysfs form of an IPv4 (mapped) or IPv6 address
# (pure bash: starting python3 under TCG costs seconds).
gid_of_addr() {
	local a=$1 head tail hw tw n i out=()
	if [[ $a != *:* ]]; then
		local IFS=.
		# shellcheck disable=SC2086
		set -- $a
		printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$1" "$2" "$3" "$4"
		return 0
	fi
	if [[ $a == *::* ]]; then head=${a%%::*} tail=${a#*::}; else head=$a tail=; fi
	IFS=: read -ra hw <<<"$head"
	IFS=: read -ra tw <<<"$tail"
	n=$((8 - ${#hw[@]} - ${#tw[@]}))
	for i in "${hw[@]}"; do out+=("$(printf '%04x' "0x$i")"); done
	for ((i = 0; i < n; i++)); do out+=(0000); done
	for i in "${tw[@]}"; do out+=("$(printf '%04x' "0x$i")"); done
	(IFS=:; echo "${out[*]}")
}
# The IPv4-mapped GID of NETDEV's first IPv4 address.
expected_gid() {
	local a
	a=$(my_ip)
	[[ -n $a ]] && gid_of_addr "$a"
}
# Index of the RoCE v2 GID whose value is ADDR (default: NETDEV's first IPv4).
# shellcheck disable=SC2120
roce_v2_gid_index() {
	local want p g v t
	if [[ -n ${1:-} ]]; then want=$(gid_of_addr "$1"); else want=$(expected_gid); fi || return 1
	p=$(ib_dir)/ports/1
	# read, not cat: hundreds of forks per lookup cost minutes on the debug kernel
	for g in "$p"/gids/*; do
		read -r v 2>/dev/null <"$g" || continue
		[[ $v == "$want" ]] || continue
		read -r t 2>/dev/null <"$p/gid_attrs/types/${g##*/}" || continue
		[[ $t == "RoCE v2" ]] || continue
		echo "${g##*/}"
		return 0
	done
	return 1
}
# Value of hardware counter $1 of $DEV/1 (0 when the driver has no such counter).
counter() {
	"$RDMA" statistic show link "$DEV/1" 2>/dev/null |
		awk -v n="$1" '{ for (i = 1; i < NF; i++) if ($i == n) { print $(i + 1); exit } }' |
		grep . || echo 0
}
# The device on NETDEV, added if it is not there, with its IPv4 RoCE v2 GID.
ensure_link() {
	link_present && return 0
	"$RDMA" link add "$DEV" type "$LTYPE" netdev "$NETDEV"
	wait_for 10 link_present || fail "link $DEV not shown after add"
	wait_for 20 roce_v2_gid_index || fail "no RoCE v2 IPv4 GID on $DEV"
}
ping1() {
	if command -v ping >/dev/null; then ping -c1 -W2 "$1"; else /bin/busybox ping -c1 -W2 "$1"; fi
}

_T_PASS=0
_T_FAIL=0
_SUITE=

info() { echo "    # $*"; }
fail() {
	echo "FAILED: $*" >&2
	echo "$*" >"${_T_REASON_FILE:-/dev/null}"
	exit 1
}
# skip MSG: the test cannot run here (a kernel feature is missing); not a pass
skip() {
	echo "SKIPPED: $*" >&2
	echo "$*" >"${_T_REASON_FILE:-/dev/null}"
	exit 77
}
now() { cut -d' ' -f1 /proc/uptime; }

# wait_for SECS CMD...: poll CMD every 0.2s until it succeeds or SECS pass.
wait_for() {
	local secs=$1 end
	shift
	end=$((SECONDS + secs))
	while ! "$@" >/dev/null 2>&1; do
		((SECONDS >= end)) && return 1
		sleep 0.2
	done
}

port_listening() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
wait_port() { wait_for "${2:-30}" port_listening "$1"; }

dmesg_mark() { echo "sroce-vmtest: mark $1" >/dev/kmsg; }
dmesg_since() {
	# Kernel log after the last occurrence of marker $1.
	dmesg | awk -v m="sroce-vmtest: mark $1\$" '$0 ~ m { buf = ""; next } { buf = buf $0 "\n" } END { printf "%s", buf }'
}
dmesg_bad_since() { dmesg_since "$1" | grep -E "$DMESG_BAD_RE"; }
# Fail the current test if the kernel log since marker $1 has anything bad.
assert_dmesg_clean() {
	local bad
	bad=$(dmesg_bad_since "$1" || true)
	if [[ -n $bad ]]; then
		echo "kernel log since '$1' has:" >&2
		echo "$bad" >&2
		fail "dmesg not clean: $(echo "$bad" | head -n1)"
	fi
}

_record() {
	echo "$*" >>"$RESULTS_TXT"
	echo "$*"
}

# KASAN and lockdep make the debug kernel 4-5 times slower (its fuzz took
# over 420 s where the stock kernels take 80-180 s): test bounds scale.
DBG_FACTOR=4
DBG_SCALE=1
[[ $(uname -r) == *-sroce-dbg ]] && DBG_SCALE=$DBG_FACTOR
run_test() {
	local name=$1 tmo=$2 fn=$3 rc t0 t1 pid dog ended reason log
	shift 3
	# VM_ONLY (ERE) narrows a suite to the named tests; setup and dmesg always run
	if [[ -n ${VM_ONLY:-} && ! $name =~ ^(setup|dmesg|kmemleak|debug_checkers)$ && ! $name =~ $VM_ONLY ]]; then
		return 0
	fi
	tmo=$((tmo * DBG_SCALE))
	log=$RESULTS/tests/$name.log
	export _T_REASON_FILE=$RESULTS/tests/$name.reason
	rm -f "$_T_REASON_FILE" "$log.timeout"
	echo "=== RUN  $name"
	dmesg_mark "test $name"
	t0=$(now)
	set -m # own process group per test, so we can kill everything it started
	(
		set -eEuo pipefail
		trap 'echo "FAILED: command \"$BASH_COMMAND\" exited $? (line $LINENO)" >&2; [[ -s $_T_REASON_FILE ]] || echo "line $LINENO: $BASH_COMMAND" >"$_T_REASON_FILE"' ERR
		"$fn" "$@"
	) >"$log" 2>&1 &
	pid=$!
	# One watchdog that sleeps, not a loop that polls: under TCG a fork
	# every 0.2 s took a tenth of a CPU from the test (make bench's too).
	(
		sleep "$tmo"
		echo "    TIMEOUT after ${tmo}s; killing test" | tee -a "$log"
		echo "timed out after ${tmo}s" >"$_T_REASON_FILE"
		: >"$log.timeout"
		kill -TERM -- "-$pid" 2>/dev/null
		sleep 1
		kill -KILL -- "-$pid" 2>/dev/null
	) &
	dog=$!
	set +m
	# whichever ends first: a test stuck in the kernel may never end
	ended=
	wait -n -p ended "$pid" "$dog" 2>/dev/null
	rc=$?
	if [[ $ended == "$pid" ]]; then
		kill -KILL -- "-$dog" 2>/dev/null
		wait "$dog" 2>/dev/null || true
	fi
	if [[ -e $log.timeout ]]; then
		rm -f "$log.timeout"
		rc=124
	fi
	# Kill whatever the test left behind (background servers etc.).
	kill -TERM -- "-$pid" 2>/dev/null && sleep 0.5
	kill -KILL -- "-$pid" 2>/dev/null
	sed 's/^/    /' "$log"
	t1=$(now)
	local dur
	dur=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	if ((rc == 0)); then
		_T_PASS=$((_T_PASS + 1))
		_record "PASS $_SUITE$name (${dur}s)"
	elif ((rc == 77)) && [[ -s $_T_REASON_FILE ]]; then
		_record "SKIP $_SUITE$name: $(head -n1 "$_T_REASON_FILE")"
	else
		_T_FAIL=$((_T_FAIL + 1))
		reason=$(head -c 300 "$_T_REASON_FILE" 2>/dev/null | head -n1)
		_record "FAIL $_SUITE$name (${dur}s): ${reason:-exit $rc}"
	fi
	return 0
}

_dmesg_suite_scan() {
	local bad
	bad=$(dmesg_bad_since "suite $_SUITE_NAME" || true)
	if [[ -n $bad ]]; then
		echo "kernel log has suspicious lines:"
		echo "$bad"
		fail "dmesg: $(echo "$bad" | wc -l) suspicious line(s): $(echo "$bad" | head -n1)"
	fi
	echo "kernel log clean since suite start"
}

suite_begin() {
	_SUITE_NAME=$1
	_SUITE=${SUITE_PREFIX:-}
	dmesg_mark "suite $_SUITE_NAME"
	echo "### suite $_SUITE_NAME on $(uname -r) ($(hostname)) at $(now)s"
}

# The debug kernel (scripts/debug-kernel) has kmemleak: leaks that name
# sroce, ib_core or the uverbs layer fail the suite. Two scans, as kmemleak
# reports an object only once it was unreferenced for a whole scan.
KMEMLEAK=/sys/kernel/debug/kmemleak
_kmemleak_scan() {
	local rep n
	echo scan >"$KMEMLEAK" && sleep 6 && echo scan >"$KMEMLEAK" || fail "cannot trigger a kmemleak scan"
	rep=$(cat "$KMEMLEAK")
	n=$(grep -c '^unreferenced object' <<<"$rep" || true)
	if grep -qE 'sroce|ib_core|ib_uverbs|rdma_|ib_' <<<"$rep"; then
		echo "$rep" | head -n 60
		fail "kmemleak: $n unreferenced object(s), some allocated by the RDMA stack"
	fi
	echo "kmemleak: no leak from the RDMA stack ($n unrelated object(s))"
}

# The debug kernel's checkers must have been on for the whole boot: a
# taint (any BUG or KASAN report, even one from before the suite) turns
# lockdep off for good, and a suite that then passes proves nothing.
_debug_checkers() {
	local dl
	dl=$(awk '$1 == "debug_locks:" { print $2 }' /proc/lockdep_stats)
	[[ $dl == 1 ]] ||
		fail "lockdep is off (debug_locks '$dl', tainted $(cat /proc/sys/kernel/tainted)): $(dmesg | grep -m1 -E 'BUG:|WARNING:|Disabling lock debugging')"
	echo "lockdep on for the whole boot (debug_locks 1)"
}

suite_end() {
	run_test dmesg 60 _dmesg_suite_scan
	if [[ -r /proc/lockdep_stats ]]; then
		run_test debug_checkers 30 _debug_checkers
	fi
	if [[ -w $KMEMLEAK ]]; then
		run_test kmemleak 120 _kmemleak_scan
	elif [[ -n ${IOP_ME:-} ]]; then
		# the peer's kernel may have kmemleak: its verdict alone counts
		_record "SKIP ${_SUITE}kmemleak: side-local: no kmemleak in $(uname -r)"
	fi
	echo "### suite $_SUITE_NAME: $_T_PASS passed, $_T_FAIL failed (uptime $(now)s)"
	dmesg >"$RESULTS/dmesg.txt" 2>/dev/null
	((_T_FAIL == 0))
}
