#!/bin/bash
# bench/series-report.sh OUT - the time series of a run of
# bench/run-bench.sh with TIMESERIES=1 (make bench-bigbdp TIMESERIES=1), side by
# side: per transfer, the megabytes that had arrived 1, 2, 3, 5, 8, 12, 20
# and 30 s after the first byte, when a quarter, half and all of it had,
# and the sender's TCP figures at its end (ss -tin: the time the
# connection was busy, and the parts of it that the receiver's window
# (rwnd_limited) and the sender's buffer (sndbuf_limited) held it back;
# the rest of the time the application had nothing to send).  The rows
# of one mode are together, so that where one client falls behind another
# shows: at the start (the window growing) or all along.
set -euo pipefail
OUT=${1:?usage: $0 OUT (a bench/run-bench.sh output with TIMESERIES=1)}
shopt -s nullglob
files=("$OUT"/series/run-*.bytes "$OUT"/*/series/run-*.bytes)
[ ${#files[@]} -gt 0 ] || { echo "series-report: no series in $OUT" >&2; exit 1; }

printf '%-42s %6s %6s %6s %6s %6s %6s %6s %6s | %6s %6s %6s | %s\n' \
    "run (mode, client-server)" "1s" "2s" "3s" "5s" "8s" "12s" "20s" "30s" \
    "25%" "50%" "100%" "sender: busy, rwnd-limited, sndbuf-limited"
for f in "${files[@]}"; do
	base=${f%.bytes}
	name=$(basename "$base")
	rest=${name#run-*-}
	# the round trip's directory too (bench-bigbdp: rtt1000/, rtt2000/)
	case $base in "$OUT"/series/*) ;; *) name=$(basename "$(dirname "$(dirname "$base")")")/$name ;; esac
	mode=${rest%-*-*}
	# the sender's last sample: busy:Xms rwnd_limited:Yms(P%) sndbuf_limited:Zms(Q%)
	tcp=-
	if [ -s "$base.ss" ]; then
		tcp=$(awk '/^@ / { blk = "" ; next } { blk = blk " " $0 }
		    blk ~ /busy:/ { last = blk }
		    END {
			n = split(last, w, " "); b = "?"; rl = "0"; sl = "0"
			for (i = 1; i <= n; i++) {
				if (w[i] ~ /^busy:/) b = substr(w[i], 6)
				if (w[i] ~ /^rwnd_limited:/) rl = substr(w[i], 14)
				if (w[i] ~ /^sndbuf_limited:/) sl = substr(w[i], 16)
			}
			printf "%s, %s, %s", b, rl, sl
		    }' "$base.ss")
	fi
	awk -v name="$name" -v mode="$mode" -v tcp="$tcp" '
	    NR == 1 { t0 = $1 }
	    { t[NR] = ($1 - t0) / 1e9; b[NR] = $2; n = NR }
	    END {
		split("1 2 3 5 8 12 20 30", at, " ")
		total = b[n]
		line = sprintf("%-42s", mode " " name)
		for (k = 1; k <= 8; k++) {
			v = "-"
			for (i = 1; i <= n; i++)
				if (t[i] <= at[k]) v = sprintf("%.0f", b[i] / 1e6)
			if (t[n] < at[k]) v = "-"
			line = line sprintf(" %6s", v)
		}
		line = line " |"
		split("0.25 0.5 1", q, " ")
		for (k = 1; k <= 3; k++) {
			v = "-"
			for (i = 1; i <= n; i++)
				if (b[i] >= q[k] * total) { v = sprintf("%.1f", t[i]); break }
			line = line sprintf(" %6s", v)
		}
		print line " | " tcp
	    }' "$f"
done | sort -k1,1 -s
echo "(MB arrived by each time after the first byte; seconds to a quarter, half and all; a time series every 100 ms, so +-0.1 s)"
