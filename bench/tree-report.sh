#!/bin/bash
# bench/tree-report.sh OUT: OUT/results.md from OUT/results.csv (tree-bench.sh)
#
# With the tree "real" and the pipes both ways, it prints issue 45's targets
# (whole command, medians): hpnscp -r and hpnsftp get -r at most 1.0 x tar
# over the same hpnssh in the same direction, a download at most 1.1 x the
# upload; with PREV_TREE's pairs, every copy no slower than the build
# before (at most 1 + TOL x its time, TOL=0.03 by default: medians of three
# on a shared 2-core machine move that much between identical builds),
# toward our sshd and, with TOSTOCK=1, toward the stock one.
set -euo pipefail
out=$1
TOL=${TOL:-0.03}
csv=$out/results.csv
[ -r "$csv" ] || { echo "tree-report: no $csv" >&2; exit 1; }
{
echo "# Trees of files over the emulated path (bench/tree-bench.sh)"
echo
cat "$out/meta.md"
echo
awk -F, -v tol="$TOL" '
function med(key,   n, i, j, t, a) {
	n = split(vals[key], a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
		if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n ? a[int((n + 1) / 2)] : ""
}
function add(key, v) { if (v != "") vals[key] = vals[key] " " v }
# one target: the median wall of mode a over that of mode b (both
# "mode:pair", case c) at most lim
function target(rtt, c, a, b, lim, what,   wa, wb, x) {
	wa = med(rtt SUBSEP c SUBSEP a SUBSEP "wall")
	wb = med(rtt SUBSEP c SUBSEP b SUBSEP "wall")
	if (wa == "" || wb == "" || wb + 0 <= 0) return
	x = wa / wb
	ntg++
	if (x <= lim + 1e-9) nmet++
	printf "| %s | %s | %s s / %s s | %.3f | ≤ %.2f | %s |\n", c, what, wa, wb, x, lim, (x <= lim + 1e-9 ? "met" : "**not met**")
}
NR == 1 { next }
{
	rtt = $1; c = $2; mode = $5; st = $7
	if (!(rtt in seenr)) { seenr[rtt] = 1; rtts[++nr] = rtt }
	if (c == "setup" || c == "onebyte") {
		add(rtt SUBSEP c SUBSEP mode SUBSEP "net", c == "setup" ? $8 : $10)
		if (!((rtt, c, mode) in seenm)) { seenm[rtt, c, mode] = 1; om[rtt, c, ++nom[rtt, c]] = mode }
		next
	}
	if (mode == "iperf3") { add(rtt SUBSEP c SUBSEP "iperf", $12); bytes[c] = $3; files[c] = $4; next }
	if (mode ~ /^resume-/) {
		k = rtt SUBSEP mode
		if (!(k in rseen)) { rseen[k] = 1; rm[rtt, ++nrm[rtt]] = mode }
		rruns[k]++
		if (st == "OK") {
			rok[k]++; add(k SUBSEP "wall", $8); add(k SUBSEP "x", $13)
			add(k SUBSEP "killed", $11); add(k SUBSEP "z", $10)
			u = uwall[rtt, $6, mode]
			if (u > $9) add(k SUBSEP "xs", sprintf("%.3f", ($8 - 2 * $9) / (u - $9)))
			if ($16 > 0) add(k SUBSEP "moved", sprintf("%.4f", $14 / $16))
		} else rfails[k] = rfails[k] " " st
		next
	}
	if (!((rtt, c) in seenc)) { seenc[rtt, c] = 1; cs[rtt, ++nc[rtt]] = c }
	if (!((rtt, c, mode) in seenm)) { seenm[rtt, c, mode] = 1; om[rtt, c, ++nom[rtt, c]] = mode }
	k = rtt SUBSEP c SUBSEP mode
	runs[k]++
	# the uninterrupted copy the next resume row of this repetition uses
	if (c == "big" && st == "OK") { split(mode, um, ":"); uwall[rtt, $6, "resume-" um[1] ":" um[2]] = $8 }
	if (st == "OK") { ok[k]++; add(k SUBSEP "net", $10); add(k SUBSEP "frac", $13); add(k SUBSEP "data", $11); add(k SUBSEP "wall", $8) }
	else if (st == "CAPPED") { capped[k]++; add(k SUBSEP "cfrac", $13); cmoved[k] = $14; cnet[k] = $10 }
	else fails[k] = fails[k] " " st
	if (lo[k] == "" || $15 + 0 < lo[k]) lo[k] = $15 + 0
	if ($15 + 0 > hi[k]) hi[k] = $15 + 0
}
END {
	for (r = 1; r <= nr; r++) {
		rtt = rtts[r]
		printf "## RTT %s ms\n\n", rtt
		printf "Set-up (`ssh host true`, median): hpn %s s, stock %s s.\n\n", med(rtt SUBSEP "setup" SUBSEP "true:hpn" SUBSEP "net"), med(rtt SUBSEP "setup" SUBSEP "true:stock" SUBSEP "net")
		print "| data | command | client | runs OK | wall − set-up, s (median) | fraction of iperf3 | first-to-last byte, s | load |"
		print "|---|---|---|---:|---:|---:|---:|---|"
		for (i = 1; i <= nc[rtt]; i++) {
			c = cs[rtt, i]
			ip = med(rtt SUBSEP c SUBSEP "iperf")
			lbl = c == "big" ? sprintf("1 file, %d MiB", bytes[c] / 1048576) : sprintf("%s (%.0f MB)", c, bytes[c] / 1e6)
			printf "| %s | iperf3 -n %s | | | %s | 1 | | |\n", lbl, bytes[c], ip
			for (j = 1; j <= nom[rtt, c]; j++) {
				mode = om[rtt, c, j]
				k = rtt SUBSEP c SUBSEP mode
				split(mode, mp, ":")
				who = mp[1] ~ /^rsync/ ? "rsync -e hpnssh" : mp[1] ~ /^pipe/ ? (c == "big" ? "cat \\| hpnssh" : "tar \\| hpnssh") : (mp[2] == "hpn" ? "hpn" : "stock")
				cmd = mp[1]
				if (capped[k] > 0 && ok[k] == 0)
					printf "| %s | %s | %s | 0/%d (cut at %.0f s: %.1f of %.1f MB) | > %.1f | %s (rate so far) | | %s–%s |\n", lbl, cmd, who, runs[k], cnet[k], cmoved[k] / 1e6, bytes[c] / 1e6, cnet[k], med(k SUBSEP "cfrac"), lo[k], hi[k]
				else
					printf "| %s | %s | %s | %d/%d | %s | %s | %s | %s–%s |\n", lbl, cmd, who, ok[k], runs[k], med(k SUBSEP "net"), med(k SUBSEP "frac"), med(k SUBSEP "data"), lo[k], hi[k]
				if (fails[k] != "") printf "|  | failed: %s | | | | | | |\n", fails[k]
			}
		}
		print ""
		if (nrm[rtt] > 0) {
			print "| big file, killed half-way then -Z | runs OK | killed copy, s | -Z, s | both, s | × uninterrupted | × beyond set-ups | bytes over the path / missing |"
			print "|---|---:|---:|---:|---:|---:|---:|---:|"
			for (j = 1; j <= nrm[rtt]; j++) {
				k = rtt SUBSEP rm[rtt, j]
				split(rm[rtt, j], mp, ":")
				printf "| %s | %d/%d | %s | %s | %s | %s | %s | %s |\n", mp[1], rok[k], rruns[k], med(k SUBSEP "killed"), med(k SUBSEP "z"), med(k SUBSEP "wall"), med(k SUBSEP "x"), med(k SUBSEP "xs"), med(k SUBSEP "moved")
				if (rfails[k] != "") printf "|  | failed: %s | | | | | | |\n", rfails[k]
			}
			print ""
		}
		ntg = nmet = 0
		print "Targets (issue 45; whole command, medians of the runs above):"
		print ""
		print "| data | target | hpn / anchor (wall) | ratio | limit | |"
		print "|---|---|---|---:|---:|---|"
		target(rtt, "real", "scp-up:hpn", "pipe-up:hpn", 1.0, "hpnscp -r up vs tar up")
		target(rtt, "real", "scp-down:hpn", "pipe-down:hpn", 1.0, "hpnscp -r down vs tar down")
		target(rtt, "real", "sftp-get:hpn", "pipe-down:hpn", 1.0, "hpnsftp get -r vs tar down")
		target(rtt, "real", "scp-down:hpn", "scp-up:hpn", 1.1, "hpnscp -r down vs up")
		target(rtt, "real", "sftp-get:hpn", "scp-up:hpn", 1.1, "hpnsftp get -r vs hpnscp -r up")
		for (i = 1; i <= nc[rtt]; i++) {
			c = cs[rtt, i]
			for (j = 1; j <= nom[rtt, c]; j++) {
				split(om[rtt, c, j], mp, ":")
				if (mp[2] == "hpn")
					target(rtt, c, mp[1] ":hpn", mp[1] ":prev", 1 + tol, mp[1] " vs the build before")
				else if (mp[2] == "hpn-s")
					target(rtt, c, mp[1] ":hpn-s", mp[1] ":prev-s", 1 + tol, mp[1] " vs the build before, toward stock sshd")
			}
		}
		if (ntg == 0) print "| | (none: needs the tree real with pipe-up and pipe-down, or PREV_TREE) | | | | |"
		printf "\n%d of %d targets met.\n\n", nmet, ntg
		if (nom[rtt, "onebyte"] > 0) {
			print "| 1-byte scp | client | beyond `ssh host true`, s (median of reps) | round trips |"
			print "|---|---|---:|---:|"
			for (j = 1; j <= nom[rtt, "onebyte"]; j++) {
				mode = om[rtt, "onebyte", j]
				v = med(rtt SUBSEP "onebyte" SUBSEP mode SUBSEP "net")
				split(mode, mp, ":")
				printf "| %s | %s | %s | %s |\n", mp[1], mp[2], v, (rtt > 0 ? sprintf("%.1f", v * 1000 / rtt) : "–")
			}
			print ""
		}
	}
}' "$csv"
} > "$out/results.md"
cat "$out/results.md"
