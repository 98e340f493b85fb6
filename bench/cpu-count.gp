# bench/cpu-count.gp - where the instructions go: user-space instructions
# per GiB moved, by category, one stacked bar per build, cipher and side
# (from bench/cpu-count.py plot).
#
#   gnuplot -e "datafile='counts.dat'; outfile='counts.png'; ttl='...'" cpu-count.gp

set terminal pngcairo size 1200,720 font ",11" noenhanced
set output outfile
if (!exists("ttl")) ttl = ""
set title "User-space instructions per GiB moved (valgrind callgrind, 10^9)\n".ttl
set ylabel "10^9 instructions per GiB (valgrind counts a rep movsb/stosb per byte)"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.75
set key outside right top autotitle columnhead
set xtics rotate by -40 nomirror
set grid ytics
set yrange [0:*]
set bmargin 9
plot for [i = 2:8] datafile using i:xtic(1) lc i - 1
