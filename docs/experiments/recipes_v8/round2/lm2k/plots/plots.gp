# gnuplot plots.gp (in this directory): loss_vs_length.{png,svg}, loss_by_position.{png,svg}
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
set ylabel 'held-out loss (nats/token)'
set logscale x 2
set xlabel 'evaluation length (tokens, log scale)'
set title "loss vs length, non-overlapping windows\ndashed: training length L = 64; bands: mean ± sample std over seeds"
set arrow from 64, graph 0 to 64, graph 1 nohead dashtype 2 lc rgb 'gray40'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo noenhanced size 1200,600 } else { set terminal png truecolor noenhanced size 1200,600 }
set output 'loss_vs_length.png'
plot 'loss_vs_length.dat' using 1:($2-$3):($2+$3) with filledcurves fc rgb '#0072b2' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:2 with linespoints lc rgb '#0072b2' pt 1 title 'rope (rank 1 at L, 9 at 16L)', \
     'loss_vs_length.dat' using 1:($5-$6):($5+$6) with filledcurves fc rgb '#d55e00' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:5 with linespoints lc rgb '#d55e00' pt 2 title 'rope+pi:4 (rank 10 at L, 10 at 16L)', \
     'loss_vs_length.dat' using 1:($8-$9):($8+$9) with filledcurves fc rgb '#3cb44b' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:8 with linespoints lc rgb '#3cb44b' pt 3 title 'rope+ntk:4 (rank 6 at L, 5 at 16L)', \
     'loss_vs_length.dat' using 1:($11-$12):($11+$12) with filledcurves fc rgb '#f032e6' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:11 with linespoints lc rgb '#f032e6' pt 4 title 'rope+yarn:4 (rank 7 at L, 5 at 16L)', \
     'loss_vs_length.dat' using 1:($14-$15):($14+$15) with filledcurves fc rgb '#b3446c' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:14 with linespoints lc rgb '#b3446c' pt 5 title 'rope+selfextend:4:32 (rank 1 at L, 5 at 16L)', \
     'loss_vs_length.dat' using 1:($17-$18):($17+$18) with filledcurves fc rgb '#000000' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:17 with linespoints lc rgb '#000000' pt 6 title 'rope+rerope:32 (rank 3 at L, 1 at 16L)', \
     'loss_vs_length.dat' using 1:($20-$21):($20+$21) with filledcurves fc rgb '#000075' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:20 with linespoints lc rgb '#000075' pt 7 title 'rope+pi:4+ft (rank 9 at L, 4 at 16L)', \
     'loss_vs_length.dat' using 1:($23-$24):($23+$24) with filledcurves fc rgb '#c2b280' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:23 with linespoints lc rgb '#c2b280' pt 8 title 'alibi (rank 7 at L, 3 at 16L)', \
     'loss_vs_length.dat' using 1:($26-$27):($26+$27) with filledcurves fc rgb '#f3c300' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:26 with linespoints lc rgb '#f3c300' pt 9 title 'kerple (rank 3 at L, 1 at 16L)', \
     'loss_vs_length.dat' using 1:($29-$30):($29+$30) with filledcurves fc rgb '#dcbeff' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:29 with linespoints lc rgb '#dcbeff' pt 10 title 't5 (rank 3 at L, 5 at 16L)'
set output
set terminal svg noenhanced size 1200,600
set output 'loss_vs_length.svg'
plot 'loss_vs_length.dat' using 1:($2-$3):($2+$3) with filledcurves fc rgb '#0072b2' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:2 with linespoints lc rgb '#0072b2' pt 1 title 'rope (rank 1 at L, 9 at 16L)', \
     'loss_vs_length.dat' using 1:($5-$6):($5+$6) with filledcurves fc rgb '#d55e00' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:5 with linespoints lc rgb '#d55e00' pt 2 title 'rope+pi:4 (rank 10 at L, 10 at 16L)', \
     'loss_vs_length.dat' using 1:($8-$9):($8+$9) with filledcurves fc rgb '#3cb44b' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:8 with linespoints lc rgb '#3cb44b' pt 3 title 'rope+ntk:4 (rank 6 at L, 5 at 16L)', \
     'loss_vs_length.dat' using 1:($11-$12):($11+$12) with filledcurves fc rgb '#f032e6' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:11 with linespoints lc rgb '#f032e6' pt 4 title 'rope+yarn:4 (rank 7 at L, 5 at 16L)', \
     'loss_vs_length.dat' using 1:($14-$15):($14+$15) with filledcurves fc rgb '#b3446c' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:14 with linespoints lc rgb '#b3446c' pt 5 title 'rope+selfextend:4:32 (rank 1 at L, 5 at 16L)', \
     'loss_vs_length.dat' using 1:($17-$18):($17+$18) with filledcurves fc rgb '#000000' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:17 with linespoints lc rgb '#000000' pt 6 title 'rope+rerope:32 (rank 3 at L, 1 at 16L)', \
     'loss_vs_length.dat' using 1:($20-$21):($20+$21) with filledcurves fc rgb '#000075' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:20 with linespoints lc rgb '#000075' pt 7 title 'rope+pi:4+ft (rank 9 at L, 4 at 16L)', \
     'loss_vs_length.dat' using 1:($23-$24):($23+$24) with filledcurves fc rgb '#c2b280' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:23 with linespoints lc rgb '#c2b280' pt 8 title 'alibi (rank 7 at L, 3 at 16L)', \
     'loss_vs_length.dat' using 1:($26-$27):($26+$27) with filledcurves fc rgb '#f3c300' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:26 with linespoints lc rgb '#f3c300' pt 9 title 'kerple (rank 3 at L, 1 at 16L)', \
     'loss_vs_length.dat' using 1:($29-$30):($29+$30) with filledcurves fc rgb '#dcbeff' fs transparent solid 0.15 noborder notitle, \
     'loss_vs_length.dat' using 1:29 with linespoints lc rgb '#dcbeff' pt 10 title 't5 (rank 3 at L, 5 at 16L)'
set output
unset logscale x
unset arrow
set xlabel 'position in the window'
set title "loss by position at length 1024\ndashed: L = 64; bands: mean ± sample std over seeds"
set arrow from 64, graph 0 to 64, graph 1 nohead dashtype 2 lc rgb 'gray40'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo noenhanced size 1200,600 } else { set terminal png truecolor noenhanced size 1200,600 }
set output 'loss_by_position.png'
plot 'loss_by_position.dat' using 1:($2-$3):($2+$3) with filledcurves fc rgb '#0072b2' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:2 with linespoints lc rgb '#0072b2' pt 1 title 'rope (rank 9 at 16L)', \
     'loss_by_position.dat' using 1:($5-$6):($5+$6) with filledcurves fc rgb '#d55e00' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:5 with linespoints lc rgb '#d55e00' pt 2 title 'rope+pi:4 (rank 10 at 16L)', \
     'loss_by_position.dat' using 1:($8-$9):($8+$9) with filledcurves fc rgb '#3cb44b' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:8 with linespoints lc rgb '#3cb44b' pt 3 title 'rope+ntk:4 (rank 5 at 16L)', \
     'loss_by_position.dat' using 1:($11-$12):($11+$12) with filledcurves fc rgb '#f032e6' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:11 with linespoints lc rgb '#f032e6' pt 4 title 'rope+yarn:4 (rank 5 at 16L)', \
     'loss_by_position.dat' using 1:($14-$15):($14+$15) with filledcurves fc rgb '#b3446c' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:14 with linespoints lc rgb '#b3446c' pt 5 title 'rope+selfextend:4:32 (rank 5 at 16L)', \
     'loss_by_position.dat' using 1:($17-$18):($17+$18) with filledcurves fc rgb '#000000' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:17 with linespoints lc rgb '#000000' pt 6 title 'rope+rerope:32 (rank 1 at 16L)', \
     'loss_by_position.dat' using 1:($20-$21):($20+$21) with filledcurves fc rgb '#000075' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:20 with linespoints lc rgb '#000075' pt 7 title 'rope+pi:4+ft (rank 4 at 16L)', \
     'loss_by_position.dat' using 1:($23-$24):($23+$24) with filledcurves fc rgb '#c2b280' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:23 with linespoints lc rgb '#c2b280' pt 8 title 'alibi (rank 3 at 16L)', \
     'loss_by_position.dat' using 1:($26-$27):($26+$27) with filledcurves fc rgb '#f3c300' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:26 with linespoints lc rgb '#f3c300' pt 9 title 'kerple (rank 1 at 16L)', \
     'loss_by_position.dat' using 1:($29-$30):($29+$30) with filledcurves fc rgb '#dcbeff' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:29 with linespoints lc rgb '#dcbeff' pt 10 title 't5 (rank 5 at 16L)'
set output
set terminal svg noenhanced size 1200,600
set output 'loss_by_position.svg'
plot 'loss_by_position.dat' using 1:($2-$3):($2+$3) with filledcurves fc rgb '#0072b2' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:2 with linespoints lc rgb '#0072b2' pt 1 title 'rope (rank 9 at 16L)', \
     'loss_by_position.dat' using 1:($5-$6):($5+$6) with filledcurves fc rgb '#d55e00' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:5 with linespoints lc rgb '#d55e00' pt 2 title 'rope+pi:4 (rank 10 at 16L)', \
     'loss_by_position.dat' using 1:($8-$9):($8+$9) with filledcurves fc rgb '#3cb44b' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:8 with linespoints lc rgb '#3cb44b' pt 3 title 'rope+ntk:4 (rank 5 at 16L)', \
     'loss_by_position.dat' using 1:($11-$12):($11+$12) with filledcurves fc rgb '#f032e6' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:11 with linespoints lc rgb '#f032e6' pt 4 title 'rope+yarn:4 (rank 5 at 16L)', \
     'loss_by_position.dat' using 1:($14-$15):($14+$15) with filledcurves fc rgb '#b3446c' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:14 with linespoints lc rgb '#b3446c' pt 5 title 'rope+selfextend:4:32 (rank 5 at 16L)', \
     'loss_by_position.dat' using 1:($17-$18):($17+$18) with filledcurves fc rgb '#000000' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:17 with linespoints lc rgb '#000000' pt 6 title 'rope+rerope:32 (rank 1 at 16L)', \
     'loss_by_position.dat' using 1:($20-$21):($20+$21) with filledcurves fc rgb '#000075' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:20 with linespoints lc rgb '#000075' pt 7 title 'rope+pi:4+ft (rank 4 at 16L)', \
     'loss_by_position.dat' using 1:($23-$24):($23+$24) with filledcurves fc rgb '#c2b280' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:23 with linespoints lc rgb '#c2b280' pt 8 title 'alibi (rank 3 at 16L)', \
     'loss_by_position.dat' using 1:($26-$27):($26+$27) with filledcurves fc rgb '#f3c300' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:26 with linespoints lc rgb '#f3c300' pt 9 title 'kerple (rank 1 at 16L)', \
     'loss_by_position.dat' using 1:($29-$30):($29+$30) with filledcurves fc rgb '#dcbeff' fs transparent solid 0.15 noborder notitle, \
     'loss_by_position.dat' using 1:29 with linespoints lc rgb '#dcbeff' pt 10 title 't5 (rank 5 at 16L)'
set output
