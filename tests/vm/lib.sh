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
#   fail MSG, info MSG, wait_for SECS CMD..., wait_port PORT [SECS]

RESULTS=${RESULTS:-/results}
[[ -d $RESULTS && -w $RESULTS ]] || RESULTS=/tmp/results
mkdir -p "$RESULTS/tests"
RESULTS_TXT=$RESULTS/results.txt

DMESG_BAD_RE='BUG|WARNING|Oops|refcount|list_add corruption|list_del corruption|soft lockup|hung task|blocked for more than|general protection|KASAN|UBSAN|ODEBUG'

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
MODPROBE=/usr/sbin/modprobe; [[ -x $MODPROBE ]] || MODPROBE=/sbin/modprobe
IP=/usr/sbin/ip; [[ -x $IP ]] || IP=/usr/bin/ip; [[ -x $IP ]] || IP=/sbin/ip
RDMA=/usr/bin/rdma; [[ -x $RDMA ]] || RDMA=/usr/sbin/rdma; [[ -x $RDMA ]] || RDMA=/sbin/rdma

_T_PASS=0
_T_FAIL=0
_SUITE=

info() { echo "    # $*"; }
fail() {
	echo "FAILED: $*" >&2
	echo "$*" >"${_T_REASON_FILE:-/dev/null}"
	exit 1
}
now() { cut -d' ' -f1 /proc/uptime; }

# wait_for SECS CMD...: poll CMD every 0.2s until it succeeds or SECS pass.
wait_for() {
	local secs=$1 end
	shift
	end=$(($(date +%s) + secs))
	while ! "$@" >/dev/null 2>&1; do
		(($(date +%s) >= end)) && return 1
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
DBG_SCALE=1
[[ $(uname -r) == *-sroce-dbg ]] && DBG_SCALE=4
run_test() {
	local name=$1 tmo=$2 fn=$3 rc t0 t1 pid reason log end
	shift 3
	# VM_ONLY (ERE) narrows a suite to the named tests; setup and dmesg always run
	if [[ -n ${VM_ONLY:-} && ! $name =~ ^(setup|dmesg)$ && ! $name =~ $VM_ONLY ]]; then
		return 0
	fi
	tmo=$((tmo * DBG_SCALE))
	log=$RESULTS/tests/$name.log
	export _T_REASON_FILE=$RESULTS/tests/$name.reason
	rm -f "$_T_REASON_FILE"
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
	set +m
	end=$(($(date +%s) + tmo))
	rc=
	while kill -0 "$pid" 2>/dev/null; do
		if (($(date +%s) >= end)); then
			echo "    TIMEOUT after ${tmo}s; killing test" | tee -a "$log"
			echo "timed out after ${tmo}s" >"$_T_REASON_FILE"
			kill -TERM -- "-$pid" 2>/dev/null
			sleep 1
			kill -KILL -- "-$pid" 2>/dev/null
			rc=124
			break
		fi
		sleep 0.2
	done
	if [[ -z $rc ]]; then
		wait "$pid" 2>/dev/null
		rc=$?
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

suite_end() {
	run_test dmesg 60 _dmesg_suite_scan
	[[ -w $KMEMLEAK ]] && run_test kmemleak 120 _kmemleak_scan
	echo "### suite $_SUITE_NAME: $_T_PASS passed, $_T_FAIL failed (uptime $(now)s)"
	dmesg >"$RESULTS/dmesg.txt" 2>/dev/null
	((_T_FAIL == 0))
}
