# shellcheck shell=bash
# make bench's points, shared by the loopback form (bench.sh, one VM) and
# the wire form (bench-pair.sh, two VMs): "NAME KIND TOOL perftest-args",
# KIND bw (MB/s), rate (Mpps) or lat (usec, typical); bw2 is bw with two
# client/server pairs at once (two processes on each side, their sum).
# Every run adds -d DEV -x GIDX -p PORT -F.
BENCH_ITERS=${BENCH_ITERS:-200}
LAT_ITERS=${LAT_ITERS:-200}
# small messages: enough of them that the run is not all setup
RATE_ITERS=${RATE_ITERS:-5000}
# shellcheck disable=SC2034 # used by the scripts that source this
BENCH_POINTS=(
	"send_bw_64k bw ib_send_bw -s 65536 -n $BENCH_ITERS"
	"write_bw_64k bw ib_write_bw -s 65536 -n $BENCH_ITERS"
	"read_bw_64k bw ib_read_bw -s 65536 -n $BENCH_ITERS"
	"write_bw_4k bw ib_write_bw -s 4096 -n $BENCH_ITERS"
	"send_rate_64 rate ib_send_bw -s 64 -n $RATE_ITERS"
	"write_rate_64 rate ib_write_bw -s 64 -n $RATE_ITERS"
	"atomic_rate rate ib_atomic_bw -n $RATE_ITERS"
	"write_bw_64k_q4 bw ib_write_bw -s 65536 -q 4 -n $BENCH_ITERS"
	"write_bw_64k_q16 bw ib_write_bw -s 65536 -q 16 -n $BENCH_ITERS"
	"write_bw_64k_2p bw2 ib_write_bw -s 65536 -n $BENCH_ITERS"
	"send_lat_2 lat ib_send_lat -s 2 -n $LAT_ITERS"
	"write_lat_2 lat ib_write_lat -s 2 -n $LAT_ITERS"
	"read_lat_2 lat ib_read_lat -s 2 -n $LAT_ITERS"
)
# BENCH_EXTRA: more points for a one-off run (tests/vm/run-suite ... bench),
# separated by ";" and written as above, e.g.
# "write_rate_64_l16 rate ib_write_bw -s 64 -l 16 -n 100000".
if [[ -n ${BENCH_EXTRA:-} ]]; then
	IFS=';' read -r -a _extra <<<"$BENCH_EXTRA"
	BENCH_POINTS+=("${_extra[@]}")
	unset _extra
fi
bench_unit() { # KIND
	case $1 in bw | bw2) echo MB/s ;; rate) echo Mpps ;; lat) echo usec ;; esac
}
# perftest's client output FILE: the average bandwidth, the message rate or
# the typical latency; nothing if it printed none.
# (perftest separates its columns with spaces and tabs.)
bench_value() { # KIND FILE
	local col=5
	[[ $1 == bw* ]] && col=4
	awk -v c="$col" '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= c { v = $c } END { print v }' "$2"
}
# how many client/server pairs a point of KIND runs at once
bench_procs() { # KIND
	if [[ $1 == bw2 ]]; then echo 2; else echo 1; fi
}
# With two clients, client I runs on CPU I: perftest calibrates its clock
# after its run (a bw test's report), and one that shares a CPU with the
# other client, still running, gets an r^2 under 0.9 and prints 0.  (The
# engine work of a loopback or doorbell pass runs in the syscall of its
# process.)
# shellcheck disable=SC2034 # the caller's array
bench_pin() { # I N: sets the array pin, the prefix of client I of N
	pin=()
	(($2 > 1)) && pin=(taskset -c $(($1 % $(nproc))))
	return 0
}
# the sum of the numbers of FILEs, nothing unless each gave a usable one
bench_sum() { # KIND FILE...
	local kind=$1 f v sum=0
	shift
	for f; do
		v=$(bench_value "$kind" "$f")
		bench_usable "$v" || return 0
		sum=$(awk -v a="$sum" -v b="$v" 'BEGIN { print a + b }')
	done
	echo "$sum"
}
# perftest prints 0/inf when its CPU clock calibration fails (common on a
# busy TCG host): such a number is no number.
bench_usable() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ && ! $1 =~ ^0(\.0*)?$ ]]; }
