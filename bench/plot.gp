# bench/plot.gp - throughput vs RTT from a chart-*.dat of bench/report.sh.
#
#   gnuplot -e "datafile='X.dat'; outfile='X.png'; modes='pipe-up scp-up';
#               ttl='aes128-gcm@openssh.com, 1000 Mbit/s path'; rate=1000" plot.gp
#
# Columns: rtt, iperf3 (median min max), then per mode hpn (median min max)
# and stock (median min max).  Lines at the medians, bars from min to max.
# hpn solid, stock dashed, one colour per mode; iperf3 black; grey dots:
# what a fixed 2 MiB window allows (2 MiB / RTT), stock OpenSSH's ceiling.

set terminal pngcairo size 1100,700 font ",11" noenhanced
set output outfile
set datafile missing "?"
set title "Throughput vs RTT: HPN vs stock OpenSSH vs iperf3\n".ttl." (median, bars min–max)"
set xlabel "round-trip time (ms)"
set ylabel "MB/s (1 MB = 1e6 bytes), first to last byte"
set key outside right top
set grid
set yrange [0:rate / 8 * 1.1]
set xrange [-5:*]
set offsets 0, 5, 0, 0
set samples 400
win(x) = x <= 0 ? 1/0 : (2 * 1048576 / (x / 1000.0) / 1e6 > rate / 8 ? 1/0 : 2 * 1048576 / (x / 1000.0) / 1e6)
n = words(modes)
col(m, side) = 5 + (m - 1) * 6 + side * 3
plot datafile using 1:2:3:4 with yerrorlines lw 3 lc rgb "black" pt 7 title "iperf3 (TCP)", \
     for [m = 1:n] datafile using 1:col(m, 0):(column(col(m, 0) + 1)):(column(col(m, 0) + 2)) \
         with yerrorlines lw 2 lc m pt 7 dt 1 title "hpn ".word(modes, m), \
     for [m = 1:n] datafile using 1:col(m, 1):(column(col(m, 1) + 1)):(column(col(m, 1) + 2)) \
         with yerrorlines lw 2 lc m pt 6 dt 2 title "stock ".word(modes, m), \
     win(x) with lines lw 1 lc rgb "gray50" dt 3 title "2 MiB / RTT"
