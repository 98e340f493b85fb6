#!/bin/bash
# bench/bigbdp-report.sh OUT: the targets of make bench-bigbdp from
# OUT/rtt*/results.csv (bench/run-bench.sh's rows): per round trip and
# mode, MB/s from the first to the last byte (median of the runs), that
# over iperf3's of the same bytes, whole-command seconds, MB/s of the whole
# command less the set-up ("ssh host true" of the same pair), the largest
# RSS of client and server; PASS/MISS for >= 0.95 x iperf3 and, where an
# anchor ran, >= it, by the rate issue 42 defines its targets in: bytes /
# (the whole command - the set-up), what a user waits for less the part
# that does not grow with the bytes.  First to last byte is compared too,
# as information: on this path it is decided by where BBR's ProbeRTT (two
# seconds without data every ~12 s, README.hpn section 7) falls in a run,
# and the first byte is not the same moment in every program (ours goes
# with the first packets of TCP's slow start).
set -euo pipefail
out=$1
for csv in "$out"/rtt*/results.csv; do
	[ -r "$csv" ] || continue
	echo "== $(dirname "$csv" | xargs basename): $(sed -n 's/^- date: //p' "$(dirname "$csv")/meta.md" | cut -d, -f1)"
	sed -n 's/^- load at start: /   load at start: /p; s/^- duration: /   duration: /p' "$(dirname "$csv")/meta.md"
	awk -F, '
	function med(k,   n, i, j, t, a) {
		n = split(v[k], a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n ? a[int((n + 1) / 2)] : ""
	}
	function add(k, x) { if (x != "") v[k] = v[k] " " x }
	# MB/s of the whole command w less the set-up s (0: not known)
	function less_setup(w, s) { return (w > s && s != "") ? bytes / (w - s) / 1e6 : 0 }
	NR == 1 { next }
	{
		rtt = $3; bytes = $6; mode = $9; c = $10; st = $13
		if (mode == "tcp") { if (st == "OK") add("iperf", $14); next }
		if (mode == "setup") { if (st == "OK") add("setup" SUBSEP c, $16); next }
		if (!((mode, c) in seen)) { seen[mode, c] = 1; order[++n] = mode SUBSEP c }
		runs[mode, c]++
		if (st != "OK") { fails[mode, c] = fails[mode, c] " " st; next }
		add("mbs" SUBSEP mode SUBSEP c, $14); add("wall" SUBSEP mode SUBSEP c, $16)
		add("crss" SUBSEP mode SUBSEP c, $20); add("srss" SUBSEP mode SUBSEP c, $23)
		add("load" SUBSEP mode SUBSEP c, $24)
	}
	END {
		ip = med("iperf")
		printf "   RTT %d ms, %.2f GiB: iperf3 cold %s MB/s; stock OpenSSH'"'"'s 2 MiB window allows %.1f MB/s here\n",
		    rtt, bytes / 1073741824, ip == "" ? "?" : ip, 2097152 / (rtt / 1000) / 1e6
		printf "   %-9s %-7s %8s %6s %8s %9s %9s %9s %5s  %s\n", "mode", "build",
		    "MB/s", "/iperf", "wall s", "MB/s-set", "cli RSS", "srv RSS", "load", "target"
		for (i = 1; i <= n; i++) {
			split(order[i], k, SUBSEP); mode = k[1]; c = k[2]
			m = med("mbs" SUBSEP mode SUBSEP c); w = med("wall" SUBSEP mode SUBSEP c)
			s = med("setup" SUBSEP c)
			if (m == "") {
				printf "   %-9s %-7s FAILED:%s\n", mode, c, fails[mode, c]
				if (c == "hpn") miss++
				continue
			}
			r = ip > 0 ? m / ip : 0
			beyond = less_setup(w, s) ? sprintf("%.1f", less_setup(w, s)) : "?"
			t = ""
			if (c == "hpn") {
				ours++
				# the target rate: bytes / (whole command - set-up)
				rs = (beyond != "?" && ip > 0) ? beyond / ip : 0
				t = sprintf("%s %.2f x iperf3", rs >= 0.95 ? "PASS" : "MISS", rs)
				if (rs < 0.95) miss++
				a = med("mbs" SUBSEP mode SUBSEP "anchor")
				if (a != "") {
					ab = less_setup(med("wall" SUBSEP mode SUBSEP "anchor"),
					    med("setup" SUBSEP "anchor"))
					if (beyond == "?" || ab == 0) {
						t = t ", HPN-SSH ?"
						miss++
					} else {
						t = t sprintf(", %s %.2f x HPN-SSH", beyond >= ab ? "PASS" : "MISS", beyond / ab)
						if (beyond < ab) miss++
					}
					t = t sprintf(" (first to last byte %.2f x)", m / a)
				}
			}
			printf "   %-9s %-7s %8s %6.2f %8s %9s %8.0fM %8.0fM %5s  %s\n", mode, c, m, r, w,
			    beyond, med("crss" SUBSEP mode SUBSEP c) / 1024,
			    med("srss" SUBSEP mode SUBSEP c) / 1024, med("load" SUBSEP mode SUBSEP c), t
		}
		if (!ours) {
			printf "   no run of ours here: no target judged\n"
			miss++
		}
		printf "   %s\n", miss ? miss " target(s) missed" : "every target met"
	}' "$csv"
done
if [ -r "$out/stall/report.txt" ]; then
	echo "== readers that stall (bench/stall-bench.sh)"
	sed 's/^stall: /   /' "$out/stall/report.txt"
fi
echo
echo "MB/s: bytes / first to last byte at the receiver (iperf3 likewise, slow start"
echo "included); wall s: the whole command; MB/s-set: bytes / (wall - the pair's"
echo "\"ssh host true\"); RSS: the largest process of each side (meter run)."
echo "target: MB/s-set >= 0.95 x iperf3 and >= HPN-SSH's MB/s-set (issue 42's"
echo "rate); first to last byte against HPN-SSH's beside it, as information."
