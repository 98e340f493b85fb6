#!/bin/bash
# bench/report.sh OUTDIR - results.md and the charts from OUTDIR/results.csv
# (run-bench.sh calls it at the end; run it again on any results directory).
#
#   OUTDIR/results.md            medians, min-max, ratios, CPU, RSS, load
#   OUTDIR/chart-CIPHER.dat      throughput vs RTT (median, min, max)
#   OUTDIR/throughput-CIPHER.png gnuplot chart of the .dat (bench/plot.gp)
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: report.sh OUTDIR}
csv=$out/results.csv
[ -r "$csv" ] || { echo "report: no $csv" >&2; exit 1; }

# Shared awk: medians and helpers (mawk has no asort).
read -r -d '' AWKLIB <<'EOF' || true
function sortv(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
		a[j + 1] = t
	}
}
# median, min and max of a space-separated list of numbers
function stats(list,   a, n, i) {
	n = split(list, a, " ")
	if (n == 0) { MED = MIN = MAX = ""; return 0 }
	for (i = 1; i <= n; i++) a[i] += 0
	sortv(a, n)
	MED = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	MIN = a[1]; MAX = a[n]
	return n
}
function add(arr, k, v) { if (v != "") arr[k] = (k in arr) ? arr[k] " " v : v }
function addu(list, v,   a, n, i) {   # add v to a space-separated set
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) if (a[i] == v) return list
	return list == "" ? v : list " " v
}
function f1(x) { return x == "" ? "–" : sprintf("%.1f", x) }
function f2(x) { return x == "" ? "–" : sprintf("%.2f", x) }
function load(line) {
	split(line, cf, ",")
	rtt = cf[3]; cipher = cf[7]; mode = cf[9]; cl = cf[10]; sv = cf[11]; st = cf[13]
	key = rtt SUBSEP cipher SUBSEP mode SUBSEP cl "-" sv
	RTTS = addu(RTTS, rtt)
	if (mode == "tcp") key = rtt SUBSEP "iperf3"
	else if (mode == "setup") CIPHERS = addu(CIPHERS, cipher)
	else { CIPHERS = addu(CIPHERS, cipher); MODES = addu(MODES, mode) }
	if (mode != "tcp") PAIRS = addu(PAIRS, cl "-" sv)
	runs[key]++
	add(loads, key, cf[24])
	if (st != "OK") { fails[key]++; FAILS = FAILS "\n| " rtt " | " cipher " | " mode " | " cl "→" sv " | " cf[12] " | `" st "` |"; return }
	add(mbs, key, cf[14]); add(setup, key, cf[17]); add(wall, key, cf[16])
	if (cf[18] != "") add(ccpu, key, cf[18] + cf[19])
	if (cf[21] != "") add(scpu, key, cf[21] + cf[22])
	add(crss, key, cf[20] / 1024); add(srss, key, cf[23] / 1024)
}
EOF

# ---------------------------------------------------------------------------
# results.md

awk -v meta="$out/meta.md" "$AWKLIB"'
NR > 1 { load($0) }
END {
	print "# HPN benchmark: HPN vs stock OpenSSH vs iperf3"
	print ""
	while ((getline l < meta) > 0) print l
	print ""
	print "Method: throughput = SIZE / (time from the first to the last byte of"
	print "payload at the receiver): the receiving file is polled every 2 ms"
	print "(scp, sftp), or `bench/meter recv` timestamps the stream (pipe modes)."
	print "Connection set-up (TCP, key exchange, auth, channel/sftp open) and"
	print "tear-down are excluded; they are shown apart as *set-up s* (= wall"
	print "time of the client - data time).  MB = 10^6 bytes.  CPU = user+sys"
	print "seconds of the whole client process tree (ssh/scp/sftp + ssh) and of"
	print "the whole server session tree (sshd-session, its privsep child,"
	print "sftp-server or the remote command), collected by a child-subreaper"
	print "wrapper (`bench/meter run`); for pipe-up the receiving `meter recv`"
	print "itself is subtracted.  RSS = the largest single process of the tree."
	print "Every result is checked (size and SHA-256 of the received file);"
	print "a failed run is listed below, never counted.  *load* = 1-minute load"
	print "average just before the runs (min-max).  Pairs are client→server."
	print ""
	nr = split(RTTS, R, " "); nc = split(CIPHERS, C, " ")
	nm = split(MODES, M, " "); np = split(PAIRS, P, " ")

	print "## Summary: median MB/s, hpn→hpn vs stock→stock (×stock), iperf3 the limit"
	print ""
	hdr = "| cipher | mode |"; sep = "|---|---|"
	for (r = 1; r <= nr; r++) { hdr = hdr " RTT " R[r] " ms |"; sep = sep "---:|" }
	print hdr; print sep
	line = "| (TCP) | iperf3 |"
	for (r = 1; r <= nr; r++) { stats(mbs[R[r], "iperf3"]); line = line " " f1(MED) " |" }
	print line
	for (c = 1; c <= nc; c++) for (m = 1; m <= nm; m++) {
		line = "| " C[c] " | " M[m] " |"
		for (r = 1; r <= nr; r++) {
			stats(mbs[R[r], C[c], M[m], "hpn-hpn"]); h = MED
			stats(mbs[R[r], C[c], M[m], "stock-stock"]); s = MED
			line = line " " f1(h) " / " f1(s) (h != "" && s > 0 ? sprintf(" (×%.1f)", h / s) : "") " |"
		}
		print line
	}
	print ""

	for (r = 1; r <= nr; r++) {
		ik = R[r] SUBSEP "iperf3"
		n = stats(mbs[ik]); ip = MED
		print "## RTT " R[r] " ms"
		print ""
		if (n) printf "iperf3 (one TCP connection, SIZE bytes): median %.1f MB/s (%.0f Mbit/s), min–max %.1f–%.1f, %d/%d runs OK\n\n", MED, MED * 8, MIN, MAX, n, runs[ik]
		else print "iperf3: no successful run\n"
		for (c = 1; c <= nc; c++) {
			print "### " C[c]
			print ""
			print "| mode | client→server | MB/s median | min–max | ×iperf3 | ×stock | set-up s | client CPU s | server CPU s | client RSS MiB | server RSS MiB | load | runs OK |"
			print "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
			for (m = 1; m <= nm; m++) for (p = 1; p <= np; p++) {
				k = R[r] SUBSEP C[c] SUBSEP M[m] SUBSEP P[p]
				if (!(k in runs)) continue
				sk = R[r] SUBSEP C[c] SUBSEP M[m] SUBSEP "stock-stock"
				stats(mbs[sk]); sm = MED
				n = stats(mbs[k]); med = MED; mm = (n ? f1(MIN) "–" f1(MAX) : "–")
				split(P[p], pp, "-")
				line = "| " M[m] " | " pp[1] "→" pp[2] " | " f1(med) " | " mm " | "
				line = line (med != "" && ip > 0 ? f2(med / ip) : "–") " | "
				line = line (med != "" && sm > 0 ? f2(med / sm) : "–") " | "
				stats(setup[k]); line = line f2(MED) " | "
				stats(ccpu[k]); line = line f2(MED) " | "
				stats(scpu[k]); line = line f2(MED) " | "
				stats(crss[k]); line = line f1(MED) " | "
				stats(srss[k]); line = line f1(MED) " | "
				stats(loads[k]); line = line f2(MIN) "–" f2(MAX) " | "
				line = line n "/" runs[k] " |"
				print line
			}
			line = ""
			for (p = 1; p <= np; p++) {
				k = R[r] SUBSEP C[c] SUBSEP "setup" SUBSEP P[p]
				if (!(k in runs)) continue
				split(P[p], pp, "-")
				stats(wall[k])
				line = line (line == "" ? "" : ", ") pp[1] "→" pp[2] " " f2(MED) " s"
			}
			if (line != "") print "\nConnection set-up alone (`ssh host true`, median wall time): " line
			print ""
		}
	}
	print "## Failed runs"
	print ""
	if (FAILS == "") print "None."
	else { print "| RTT | cipher | mode | client→server | rep | status |"; print "|---|---|---|---|---|---|" FAILS }
}' "$csv" > "$out/results.md"

# ---------------------------------------------------------------------------
# charts: one per cipher, throughput vs RTT

ciphers=$(awk -F, 'NR > 1 && $9 != "tcp" && $9 != "setup" { print $7 }' "$csv" | awk '!s[$0]++')
modes=$(awk -F, 'NR > 1 && $9 != "tcp" && $9 != "setup" { print $9 }' "$csv" | awk '!s[$0]++' | tr '\n' ' ')
rate=$(awk -F, 'NR == 2 { print $4 }' "$csv")
for cipher in $ciphers; do
	dat=$out/chart-${cipher%%@*}.dat
	awk -v cipher="$cipher" -v modes="$modes" "$AWKLIB"'
	NR > 1 { load($0) }
	END {
		nr = split(RTTS, R, " "); nm = split(modes, M, " ")
		printf "# rtt_ms iperf3(med min max)"
		for (m = 1; m <= nm; m++) printf " %s:hpn(med min max) %s:stock(med min max)", M[m], M[m]
		print ""
		for (r = 1; r <= nr; r++) {
			line = R[r]
			n = stats(mbs[R[r], "iperf3"]); line = line (n ? " " MED " " MIN " " MAX : " ? ? ?")
			for (m = 1; m <= nm; m++) {
				n = stats(mbs[R[r], cipher, M[m], "hpn-hpn"]); line = line (n ? " " MED " " MIN " " MAX : " ? ? ?")
				n = stats(mbs[R[r], cipher, M[m], "stock-stock"]); line = line (n ? " " MED " " MIN " " MAX : " ? ? ?")
			}
			print line
		}
	}' "$csv" | sort -n > "$dat"
	png=$out/throughput-${cipher%%@*}.png
	if command -v gnuplot >/dev/null; then
		gnuplot -e "datafile='$dat'; outfile='$png'; modes='$modes'; ttl='$cipher, $rate Mbit/s path'; rate=$rate" \
		    "$TOP/bench/plot.gp" || echo "report: gnuplot failed for $cipher" >&2
	fi
done
# The main chart: the first cipher.
first=$(head -n 1 <<<"$ciphers")
[ -n "$first" ] && [ -f "$out/throughput-${first%%@*}.png" ] &&
    cp "$out/throughput-${first%%@*}.png" "$out/throughput.png"
echo "report: $out/results.md, $(ls "$out"/*.png 2>/dev/null | wc -l) charts, $(($(wc -l < "$csv") - 1)) rows in $csv"
