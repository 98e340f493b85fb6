# shellcheck shell=bash
# Shell functions (bash) shared by bench/run-bench.sh and bench/demo-wan.sh.
# Source it after setting TOP (the repository); nothing runs on load.
#
#   bl_bytes SIZE                 "1G", "256M", "64K" or bytes -> bytes
#   bl_human BYTES                -> "1 GiB", "256 MiB", "12345 bytes"
#   bl_meter OUTDIR               build bench/meter.c into OUTDIR/meter
#   bl_snapshot_tree TREE DIR     copy TREE's binaries to DIR (waits, bounded,
#                                 while a rebuild has them missing)
#   bl_netpath_snapshot DIR       copy bench/netpath to DIR; sets NP
#   bl_start_server WORK TAG TREE PORT NAME
#                                 sshd of TREE in NAME's server namespace on
#                                 PORT, sessions measured by meter run into
#                                 WORK/rusage-TAG/; client config in
#                                 WORK/ssh_config-TAG
#   bl_stop_server WORK PORT
#   bl_session_usage WORK TAG     wait (bounded) for the finished session's
#                                 figures; prints "user sys maxrss_kb" summed
#                                 over the sessions (max of the RSS)
#   bl_runs K CMD...              CMD's output, K runs, space-separated
#   bl_median N...                the median of the numbers
#   bl_beyond MBPS SETUP BYTES    MB/s of BYTES moved at MBPS by whole
#                                 command, SETUP seconds of set-up taken off

# shellcheck source=../scripts/lib/sshd.sh
. "$TOP/scripts/lib/sshd.sh"

BL_BINARIES="ssh scp sftp sshd sshd-session sshd-auth sftp-server"

bl_log() { echo "bench: $*" >&2; }
bl_die() { echo "bench: ERROR: $*" >&2; exit 1; }

bl_bytes() {
	local s=$1 n
	case "$s" in
	*[gG]) n=${s%?}; echo $((n * 1024 * 1024 * 1024)) ;;
	*[mM]) n=${s%?}; echo $((n * 1024 * 1024)) ;;
	*[kK]) n=${s%?}; echo $((n * 1024)) ;;
	*) echo $((s)) ;;
	esac
}

bl_human() {
	awk -v b="$1" 'BEGIN {
		if (b % 1073741824 == 0) printf "%d GiB\n", b / 1073741824
		else if (b % 1048576 == 0) printf "%d MiB\n", b / 1048576
		else printf "%d bytes\n", b }'
}

bl_meter() {
	local out=$1 src=$TOP/bench/meter.c
	mkdir -p "$out"
	if [ ! -x "$out/meter" ] || [ "$src" -nt "$out/meter" ]; then
		${CC:-cc} -O2 -Wall -Wextra -o "$out/meter.tmp" "$src" ||
		    bl_die "cannot build $src"
		mv -f "$out/meter.tmp" "$out/meter"
	fi
}

# The lead rebuilds the trees while others measure: copy the binaries once,
# so that one run measures one build.  A binary missing or younger than 20 s
# means a build in progress: wait for it (at most 20 minutes).
bl_snapshot_tree() {
	local tree=$1 dir=$2 b i ok young
	for ((i = 0; i < 240; i++)); do
		ok=1 young=0
		for b in $BL_BINARIES; do
			[ -x "$tree/$b" ] || { ok=0; break; }
			[ $(($(date +%s) - $(stat -c %Y "$tree/$b"))) -ge 20 ] || young=1
		done
		if [ $ok = 1 ] && [ $young = 0 ]; then
			mkdir -p "$dir"
			for b in $BL_BINARIES; do
				cp -p "$tree/$b" "$dir/$b"
			done
			# Re-check: a rebuild may have started while we copied.
			for b in $BL_BINARIES; do
				cmp -s "$tree/$b" "$dir/$b" || ok=0
			done
			[ $ok = 1 ] && return 0
		fi
		[ "$i" = 0 ] && bl_log "waiting for $tree to be built (binaries missing or being rebuilt)"
		sleep 5
	done
	bl_die "$tree: binaries ($BL_BINARIES) still missing after 20 minutes"
}

# bench/netpath is being worked on while we run: use a copy of it for the
# whole run (bash reads scripts as it goes), with its own build directory.
bl_netpath_snapshot() {
	local dir=$1 f
	mkdir -p "$dir"
	for f in netpath delayline.c; do
		[ -r "$TOP/bench/netpath/$f" ] || bl_die "missing bench/netpath/$f"
		cp "$TOP/bench/netpath/$f" "$dir/$f"
	done
	chmod +x "$dir/netpath"
	export NETPATH_BUILD=$dir/build
	NP=$dir/netpath
}

bl_start_server() {
	local work=$1 tag=$2 tree=$3 port=$4 name=$5 addr
	addr=$("$NP" addr server --name "$name")
	mkdir -p "$work/rusage-$tag"
	cat > "$work/session-$tag" <<-EOF
	#!/bin/sh
	exec $work/meter run $work/rusage-$tag/session.\$\$ -- $tree/sshd-session "\$@"
	EOF
	chmod 755 "$work/session-$tag"
	TSSHD_SESSION_PATH=$work/session-$tag TSSHD_EXTRA=${SERVER_OPTS:-} \
	    tsshd_start "$work" "$tree" "$port" "$addr" \
	    "$NP" exec server --name "$name" -- || return 1
	tsshd_client_config "$work" "$port" "$addr" > "$work/ssh_config-$tag"
}

bl_stop_server() {
	tsshd_stop "$1" "$2"
}

bl_session_usage() {
	local dir=$1/rusage-$2 i f
	local -a done_files
	for ((i = 0; i < 150; i++)); do
		done_files=()
		for f in "$dir"/session.*; do
			case "$f" in *.tmp|*'*') continue ;; esac
			done_files+=("$f")
		done
		if [ ${#done_files[@]} -gt 0 ]; then
			awk '{ u += $4; s += $5; if ($6 > m) m = $6 }
			    END { printf "%.3f %.3f %d\n", u, s, m }' "${done_files[@]}"
			return 0
		fi
		sleep 0.1
	done
	echo "? ? ?"
	return 1
}

bl_runs() {
	local k=$1 i out=""
	shift
	for ((i = 0; i < k; i++)); do
		out="$out $("$@")"
	done
	echo "${out# }"
}

bl_median() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

bl_beyond() {
	awk -v r="$1" -v s="$2" -v n="$3" \
	    'BEGIN { w = n / 1e6 / r; printf "%.1f", n / 1e6 / (w - s) }'
}
