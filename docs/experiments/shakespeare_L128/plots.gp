# gnuplot plots.gp (in this directory): loss_vs_length.{png,svg}, loss_by_position.{png,svg}
set datafile missing 'NaN'
set key outside right
set grid
set ylabel 'held-out loss (nats/token)'
set logscale x 2
set xlabel 'evaluation length (tokens, log scale)'
set title 'loss vs length (non-overlapping windows; dashed: training length L = 128)'
set arrow from 128, graph 0 to 128, graph 1 nohead dashtype 2 lc rgb 'gray40'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo noenhanced size 1000,600 } else { set terminal png noenhanced size 1000,600 }
set output 'loss_vs_length.png'
plot 'loss_vs_length.dat' using 1:2 with linespoints title 'nope', \
     'loss_vs_length.dat' using 1:3 with linespoints title 'learned', \
     'loss_vs_length.dat' using 1:4 with linespoints title 'sinusoidal', \
     'loss_vs_length.dat' using 1:5 with linespoints title 'rope', \
     'loss_vs_length.dat' using 1:6 with linespoints title 'rope+pi:4', \
     'loss_vs_length.dat' using 1:7 with linespoints title 'rope+ntk:4', \
     'loss_vs_length.dat' using 1:8 with linespoints title 'rope+yarn:4', \
     'loss_vs_length.dat' using 1:9 with linespoints title 'rope+llama3:4', \
     'loss_vs_length.dat' using 1:10 with linespoints title 'rope+dynatan', \
     'loss_vs_length.dat' using 1:11 with linespoints title 'alibi', \
     'loss_vs_length.dat' using 1:12 with linespoints title 't5', \
     'loss_vs_length.dat' using 1:13 with linespoints title 'kerple', \
     'loss_vs_length.dat' using 1:14 with linespoints title 'xpos', \
     'loss_vs_length.dat' using 1:15 with linespoints title 'fope'
set output
set terminal svg noenhanced size 1000,600
set output 'loss_vs_length.svg'
plot 'loss_vs_length.dat' using 1:2 with linespoints title 'nope', \
     'loss_vs_length.dat' using 1:3 with linespoints title 'learned', \
     'loss_vs_length.dat' using 1:4 with linespoints title 'sinusoidal', \
     'loss_vs_length.dat' using 1:5 with linespoints title 'rope', \
     'loss_vs_length.dat' using 1:6 with linespoints title 'rope+pi:4', \
     'loss_vs_length.dat' using 1:7 with linespoints title 'rope+ntk:4', \
     'loss_vs_length.dat' using 1:8 with linespoints title 'rope+yarn:4', \
     'loss_vs_length.dat' using 1:9 with linespoints title 'rope+llama3:4', \
     'loss_vs_length.dat' using 1:10 with linespoints title 'rope+dynatan', \
     'loss_vs_length.dat' using 1:11 with linespoints title 'alibi', \
     'loss_vs_length.dat' using 1:12 with linespoints title 't5', \
     'loss_vs_length.dat' using 1:13 with linespoints title 'kerple', \
     'loss_vs_length.dat' using 1:14 with linespoints title 'xpos', \
     'loss_vs_length.dat' using 1:15 with linespoints title 'fope'
set output
unset logscale x
unset arrow
set xlabel 'position in the window'
set title 'loss by position at length 2048 (dashed: L = 128)'
set arrow from 128, graph 0 to 128, graph 1 nohead dashtype 2 lc rgb 'gray40'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo noenhanced size 1000,600 } else { set terminal png noenhanced size 1000,600 }
set output 'loss_by_position.png'
plot 'loss_by_position.dat' using 1:2 with linespoints title 'nope', \
     'loss_by_position.dat' using 1:4 with linespoints title 'sinusoidal', \
     'loss_by_position.dat' using 1:5 with linespoints title 'rope', \
     'loss_by_position.dat' using 1:6 with linespoints title 'rope+pi:4', \
     'loss_by_position.dat' using 1:7 with linespoints title 'rope+ntk:4', \
     'loss_by_position.dat' using 1:8 with linespoints title 'rope+yarn:4', \
     'loss_by_position.dat' using 1:9 with linespoints title 'rope+llama3:4', \
     'loss_by_position.dat' using 1:10 with linespoints title 'rope+dynatan', \
     'loss_by_position.dat' using 1:11 with linespoints title 'alibi', \
     'loss_by_position.dat' using 1:12 with linespoints title 't5', \
     'loss_by_position.dat' using 1:13 with linespoints title 'kerple', \
     'loss_by_position.dat' using 1:14 with linespoints title 'xpos', \
     'loss_by_position.dat' using 1:15 with linespoints title 'fope'
set output
set terminal svg noenhanced size 1000,600
set output 'loss_by_position.svg'
plot 'loss_by_position.dat' using 1:2 with linespoints title 'nope', \
     'loss_by_position.dat' using 1:4 with linespoints title 'sinusoidal', \
     'loss_by_position.dat' using 1:5 with linespoints title 'rope', \
     'loss_by_position.dat' using 1:6 with linespoints title 'rope+pi:4', \
     'loss_by_position.dat' using 1:7 with linespoints title 'rope+ntk:4', \
     'loss_by_position.dat' using 1:8 with linespoints title 'rope+yarn:4', \
     'loss_by_position.dat' using 1:9 with linespoints title 'rope+llama3:4', \
     'loss_by_position.dat' using 1:10 with linespoints title 'rope+dynatan', \
     'loss_by_position.dat' using 1:11 with linespoints title 'alibi', \
     'loss_by_position.dat' using 1:12 with linespoints title 't5', \
     'loss_by_position.dat' using 1:13 with linespoints title 'kerple', \
     'loss_by_position.dat' using 1:14 with linespoints title 'xpos', \
     'loss_by_position.dat' using 1:15 with linespoints title 'fope'
set output
