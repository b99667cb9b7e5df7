# gnuplot plots.gp (in this directory): loss_vs_length.{png,svg}, loss_by_position.{png,svg}
set datafile missing 'NaN'
set key outside right
set grid
set ylabel 'held-out loss (nats/token)'
set linetype 1 lc rgb '#0072b2' lw 2 pt 1 ps 1.3
set linetype 2 lc rgb '#d55e00' lw 2 pt 2 ps 1.3
set linetype 3 lc rgb '#009e73' lw 2 pt 3 ps 1.3
set linetype 4 lc rgb '#cc79a7' lw 2 pt 4 ps 1.3
set linetype 5 lc rgb '#8c6d00' lw 2 pt 5 ps 1.3
set linetype 6 lc rgb '#56b4e9' lw 2 pt 6 ps 1.3
set linetype 7 lc rgb '#000000' lw 2 pt 7 ps 1.3
set linetype 8 lc rgb '#7f7f7f' lw 2 pt 8 ps 1.3
set linetype cycle 8
set logscale x 2
set xlabel 'evaluation length (tokens, log scale)'
set title 'loss vs length (non-overlapping windows; dashed: training length L = 128)'
set arrow from 128, graph 0 to 128, graph 1 nohead dashtype 2 lc rgb 'gray40'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo noenhanced size 1000,600 } else { set terminal png noenhanced size 1000,600 }
set output 'loss_vs_length.png'
plot 'loss_vs_length.dat' using 1:2 with linespoints title 'rope', \
     'loss_vs_length.dat' using 1:3 with linespoints title 'rope+pi:4', \
     'loss_vs_length.dat' using 1:4 with linespoints title 'rope+ntk:4', \
     'loss_vs_length.dat' using 1:5 with linespoints title 'rope+dynamic-ntk', \
     'loss_vs_length.dat' using 1:6 with linespoints title 'rope+yarn:4', \
     'loss_vs_length.dat' using 1:7 with linespoints title 'rope+llama3:4', \
     'loss_vs_length.dat' using 1:8 with linespoints title 'rope+dynatan', \
     'loss_vs_length.dat' using 1:9 with linespoints title 'rope+pi:4+ft'
set output
set terminal svg noenhanced size 1000,600
set output 'loss_vs_length.svg'
plot 'loss_vs_length.dat' using 1:2 with linespoints title 'rope', \
     'loss_vs_length.dat' using 1:3 with linespoints title 'rope+pi:4', \
     'loss_vs_length.dat' using 1:4 with linespoints title 'rope+ntk:4', \
     'loss_vs_length.dat' using 1:5 with linespoints title 'rope+dynamic-ntk', \
     'loss_vs_length.dat' using 1:6 with linespoints title 'rope+yarn:4', \
     'loss_vs_length.dat' using 1:7 with linespoints title 'rope+llama3:4', \
     'loss_vs_length.dat' using 1:8 with linespoints title 'rope+dynatan', \
     'loss_vs_length.dat' using 1:9 with linespoints title 'rope+pi:4+ft'
set output
unset logscale x
unset arrow
set xlabel 'position in the window'
set title 'loss by position at length 2048 (dashed: L = 128)'
set arrow from 128, graph 0 to 128, graph 1 nohead dashtype 2 lc rgb 'gray40'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo noenhanced size 1000,600 } else { set terminal png noenhanced size 1000,600 }
set output 'loss_by_position.png'
plot 'loss_by_position.dat' using 1:2 with linespoints title 'rope', \
     'loss_by_position.dat' using 1:3 with linespoints title 'rope+pi:4', \
     'loss_by_position.dat' using 1:4 with linespoints title 'rope+ntk:4', \
     'loss_by_position.dat' using 1:5 with linespoints title 'rope+dynamic-ntk', \
     'loss_by_position.dat' using 1:6 with linespoints title 'rope+yarn:4', \
     'loss_by_position.dat' using 1:7 with linespoints title 'rope+llama3:4', \
     'loss_by_position.dat' using 1:8 with linespoints title 'rope+dynatan', \
     'loss_by_position.dat' using 1:9 with linespoints title 'rope+pi:4+ft'
set output
set terminal svg noenhanced size 1000,600
set output 'loss_by_position.svg'
plot 'loss_by_position.dat' using 1:2 with linespoints title 'rope', \
     'loss_by_position.dat' using 1:3 with linespoints title 'rope+pi:4', \
     'loss_by_position.dat' using 1:4 with linespoints title 'rope+ntk:4', \
     'loss_by_position.dat' using 1:5 with linespoints title 'rope+dynamic-ntk', \
     'loss_by_position.dat' using 1:6 with linespoints title 'rope+yarn:4', \
     'loss_by_position.dat' using 1:7 with linespoints title 'rope+llama3:4', \
     'loss_by_position.dat' using 1:8 with linespoints title 'rope+dynatan', \
     'loss_by_position.dat' using 1:9 with linespoints title 'rope+pi:4+ft'
set output
