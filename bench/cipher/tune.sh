#!/bin/sh
# Sweep compile-time tunables of src/cipher-ctr-mt.c and benchmark each.
# Usage: sh tune.sh [bench args...]   (default: -k 128 -r 5)
# Set CONFIGS to override the list; each entry is
#   name:span_bytes:slots_per_worker:min_slots:main_spin_ns:worker_spin_ns:
#   ready_div:free_div:max_slots
# Before every run it waits (up to 10 min) for the machine to be idle,
# because the numbers are meaningless on a loaded box.

CC=${CC:-cc}
SRC=../../src
ARGS=${*:--k 128 -r 5}
CONFIGS=${CONFIGS:-"
default:65536:16:16:1000:10000:2:2:32
s32k-q32:32768:32:32:1000:10000:2:2:32
s16k-q64:16384:64:64:1000:10000:2:2:64
s64k-q32:65536:32:32:1000:10000:2:2:64
spin0:65536:16:16:0:10000:2:2:32
spin5us:65536:16:16:5000:10000:2:2:32
wspin0:65536:16:16:1000:0:2:2:32
"}

cpu_idle_pct() {
	set -- $(head -1 /proc/stat)
	i1=$5; t1=$(($2 + $3 + $4 + $5 + $6 + $7 + $8 + $9))
	sleep 2
	set -- $(head -1 /proc/stat)
	i2=$5; t2=$(($2 + $3 + $4 + $5 + $6 + $7 + $8 + $9))
	echo $((100 * (i2 - i1) / (t2 - t1 + 1)))
}

wait_quiet() {
	n=0
	while [ $n -lt 300 ]; do
		idle=$(cpu_idle_pct)
		[ "$idle" -ge 95 ] && return 0
		n=$((n + 1))
	done
	echo "warning: machine still busy (idle ${idle}%)"
}

for c in $CONFIGS; do
	IFS=: read name span spw mins msp wsp rdiv fdiv maxs <<EOT
$c
EOT
	bin=./bench_ctr_mt_tune_$name
	$CC -O2 -I$SRC -DHPN_CTR_MT_SPAN_BYTES=$span \
	    -DHPN_CTR_MT_SLOTS_PER_WORKER=$spw -DHPN_CTR_MT_MIN_SLOTS=$mins \
	    -DHPN_CTR_MT_MAX_SLOTS=${maxs:-1024} \
	    -DHPN_CTR_MT_SPIN_NS=$msp -DHPN_CTR_MT_WORKER_SPIN_NS=$wsp \
	    -DHPN_CTR_MT_READY_DIV=${rdiv:-2} -DHPN_CTR_MT_FREE_DIV=${fdiv:-2} \
	    -o $bin bench_ctr_mt.c $SRC/cipher-ctr-mt.c -lcrypto -lpthread ||
	    exit 1
	wait_quiet
	echo "== $name (span $span, slots/worker $spw, min slots $mins," \
	    "main spin ${msp}ns, worker spin ${wsp}ns, ready/free div" \
	    "${rdiv:-2}/${fdiv:-2}); load: $(cat /proc/loadavg)"
	$bin $ARGS | tail -n +3
done
