#!/bin/bash
# bench/cpu-report.sh CSV: the markdown table of a bench/cpu-bench.sh run.
# Per case and mode, over the successful repetitions: median throughput
# (min-max), CPU seconds per GB (10^9 bytes) of the client's and the
# server's main thread and of their AES-CTR worker threads, MB moved per
# CPU-second of both ends together, and ratios: throughput against the
# stock build with the same cipher (the none cases: against hpn aes128-gcm),
# and the main threads' CPU against stock's.  With a ref:relay case (the
# pipeline without SSH), one more line per mode: each case's throughput as
# a fraction of the relay's.
set -euo pipefail
[ $# -eq 1 ] && [ -r "$1" ] || { echo "usage: $0 results.csv" >&2; exit 2; }

awk -F, '
function median(list,    n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) {
		t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	if (n == 0) return ""
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function lo(list,    n, a, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 < m + 0) m = a[i]; return m }
function hi(list,    n, a, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 > m + 0) m = a[i]; return m }
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
	k = $col["case"] SUBSEP $col["mode"]
	if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	if (!($col["mode"] in mseen)) { mseen[$col["mode"]] = 1; modes[++nmodes] = $col["mode"] }
	runs[k]++
	if ($col["status"] != "OK") { fails[k]++; next }
	gb = $col["size_bytes"] / 1e9
	rate[k] = rate[k] " " $col["mb_s"]
	cm[k] = cm[k] " " $col["client_main_s"] / gb
	cw[k] = cw[k] " " $col["client_workers_s"] / gb
	sm[k] = sm[k] " " $col["server_main_s"] / gb
	sw[k] = sw[k] " " $col["server_workers_s"] / gb
	tot = $col["client_main_s"] + $col["client_workers_s"] + $col["server_main_s"] + $col["server_workers_s"]
	if (tot > 0) eff[k] = eff[k] " " $col["size_bytes"] / 1e6 / tot
	cipher[k] = $col["cipher"]; mac[k] = $col["mac"]
	load[k] = load[k] " " $col["load1"]
}
END {
	print "| case | mode | MB/s median (min–max) | client main s/GB | client workers s/GB | server main s/GB | server workers s/GB | MB per CPU-s | rate vs ref | main threads vs stock | load (min–max) | ok/runs |"
	print "|---|---|---|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, p, SUBSEP); cs = p[1]; mode = p[2]
		split(cs, tc, ":"); tree = tc[1]; kind = tc[2]
		ok = runs[k] - fails[k]
		if (ok == 0) { printf "| %s | %s | FAILED | | | | | | | | | %d/%d |\n", cs, mode, ok, runs[k]; continue }
		r = median(rate[k])
		# the reference: stock with the same cipher; none: hpn gcm
		ref = ""
		if (kind ~ /^none/) ref = "hpn:gcm"
		else if (tree == "hpn") { base = kind; sub(/-mt$/, "", base); ref = "stock:" base }
		rr = ""; mr = ""
		rk = ref SUBSEP mode
		if (ref != "" && (rk in rate) && median(rate[rk]) > 0)
			rr = sprintf("%.2f× %s", r / median(rate[rk]), ref)
		sk = "stock:" kind SUBSEP mode
		sub(/-mt/, "", sk)
		if (tree == "hpn" && kind !~ /^none/ && (sk in cm)) {
			ms = median(cm[sk]) + median(sm[sk])
			if (ms > 0) mr = sprintf("%.2f", (median(cm[k]) + median(sm[k])) / ms)
		}
		printf "| %s (%s%s) | %s | %.1f (%.1f–%.1f) | %.2f | %.2f | %.2f | %.2f | %.0f | %s | %s | %.1f–%.1f | %d/%d |\n", \
		    cs, cipher[k], mac[k] == "implicit" ? "" : ", MAC " mac[k], mode, r, lo(rate[k]), hi(rate[k]), \
		    median(cm[k]), median(cw[k]), median(sm[k]), median(sw[k]), median(eff[k]), rr, mr, \
		    lo(load[k]), hi(load[k]), ok, runs[k]
	}
	for (m = 1; m <= nmodes; m++) {
		rk = "ref:relay" SUBSEP modes[m]
		if (!(rk in rate) || median(rate[rk]) <= 0) continue
		line = ""
		for (i = 1; i <= nk; i++) {
			k = order[i]; split(k, p, SUBSEP)
			if (p[2] != modes[m] || p[1] == "ref:relay" || !(k in rate)) continue
			line = line sprintf("%s%s %.2f", line == "" ? "" : ", ", p[1], median(rate[k]) / median(rate[rk]))
		}
		printf "\n%s without SSH (ref:relay): %.1f MB/s; each case as a fraction of that: %s\n", \
		    modes[m], median(rate[rk]), line
	}
}' "$1"
