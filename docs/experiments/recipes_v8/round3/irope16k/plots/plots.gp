# gnuplot plots.gp (in this directory): accuracy_vs_length.{png,svg}
set datafile missing 'NaN'
set key outside right
set grid
set linetype 1 lc rgb '#0072b2' lw 2 pt 1 ps 1.3
set linetype 2 lc rgb '#d55e00' lw 2 pt 2 ps 1.3
set linetype 3 lc rgb '#3cb44b' lw 2 pt 3 ps 1.3
set linetype 4 lc rgb '#f032e6' lw 2 pt 4 ps 1.3
set linetype 5 lc rgb '#b3446c' lw 2 pt 5 ps 1.3
set linetype 6 lc rgb '#000000' lw 2 pt 6 ps 1.3
set linetype 7 lc rgb '#000075' lw 2 pt 7 ps 1.3
set linetype 8 lc rgb '#c2b280' lw 2 pt 8 ps 1.3
set linetype 9 lc rgb '#f3c300' lw 2 pt 9 ps 1.3
set linetype 10 lc rgb '#dcbeff' lw 2 pt 10 ps 1.3
set linetype 11 lc rgb '#17becf' lw 2 pt 11 ps 1.3
set linetype 12 lc rgb '#654522' lw 2 pt 12 ps 1.3
set linetype 13 lc rgb '#800000' lw 2 pt 13 ps 1.3
set linetype 14 lc rgb '#f99379' lw 2 pt 1 ps 1.3
set linetype 15 lc rgb '#808000' lw 2 pt 2 ps 1.3
set linetype 16 lc rgb '#4363d8' lw 2 pt 3 ps 1.3
set linetype 17 lc rgb '#e6194b' lw 2 pt 4 ps 1.3
set linetype 18 lc rgb '#1b9e77' lw 2 pt 5 ps 1.3
set linetype 19 lc rgb '#984ea3' lw 2 pt 6 ps 1.3
set linetype 20 lc rgb '#7f7f7f' lw 2 pt 7 ps 1.3
set linetype 21 lc rgb '#8db600' lw 2 pt 8 ps 1.3
set linetype cycle 21
set logscale x 2
set yrange [-2:102]
set ylabel 'RULER score (%), mean and std over seeds'
set xlabel 'task length (dashed: the last whose examples fit in L = 64 positions)'
set title 'niah_single:len=32-64'
set arrow from 64, graph 0 to 64, graph 1 nohead dashtype 2 lc rgb 'gray40'
set arrow from graph 0, first 85.6 to graph 1, first 85.6 nohead dashtype 4 lc rgb 'gray40'
set arrow from 64, graph 0 to 64, graph 1 nohead dashtype 3 lc rgb 'gray40'
set xlabel 'task length (dotted: the longest trained, 64; dashed: the last whose examples fit in L = 64 positions)'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo noenhanced size 1000,600 } else { set terminal png truecolor noenhanced size 1000,600 }
set output 'accuracy_vs_length.png'
plot 'accuracy_vs_length.dat' using 1:3:4 with yerrorlines lc rgb '#0072b2' pt 1 title 'rope+attn(3*chunk=16:global,nope) (rank 1 at length 32, 1 at length 256)'
set output
set terminal svg noenhanced size 1000,600
set output 'accuracy_vs_length.svg'
plot 'accuracy_vs_length.dat' using 1:3:4 with yerrorlines lc rgb '#0072b2' pt 1 title 'rope+attn(3*chunk=16:global,nope) (rank 1 at length 32, 1 at length 256)'
set output
