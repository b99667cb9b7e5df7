# gnuplot bias.gp (in this directory): bias.png, bias.svg
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
set datafile separator ','
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo noenhanced size 1300,380 } else { set terminal png truecolor noenhanced size 1300,380 }
set output 'bias.png'
unset grid
unset key
set palette defined (0 '#08306b', 1 '#f7fbff')
set multiplot layout 1,4 title 'score bias b(i, j), t5, layer 0'
set title 'head 0'
set size ratio -1
set xrange [-0.5:63.5]
set yrange [63.5:-0.5]
set xlabel 'key position j'
set ylabel 'query position i'
plot 'bias_h0.csv' matrix using 1:2:3 with image notitle
set title 'head 1'
set size ratio -1
set xrange [-0.5:63.5]
set yrange [63.5:-0.5]
set xlabel 'key position j'
set ylabel 'query position i'
plot 'bias_h1.csv' matrix using 1:2:3 with image notitle
set title 'head 2'
set size ratio -1
set xrange [-0.5:63.5]
set yrange [63.5:-0.5]
set xlabel 'key position j'
set ylabel 'query position i'
plot 'bias_h2.csv' matrix using 1:2:3 with image notitle
set title 'head 3'
set size ratio -1
set xrange [-0.5:63.5]
set yrange [63.5:-0.5]
set xlabel 'key position j'
set ylabel 'query position i'
plot 'bias_h3.csv' matrix using 1:2:3 with image notitle
unset multiplot
set terminal svg noenhanced size 1300,380
set output 'bias.svg'
unset grid
unset key
set palette defined (0 '#08306b', 1 '#f7fbff')
set multiplot layout 1,4 title 'score bias b(i, j), t5, layer 0'
set title 'head 0'
set size ratio -1
set xrange [-0.5:63.5]
set yrange [63.5:-0.5]
set xlabel 'key position j'
set ylabel 'query position i'
plot 'bias_h0.csv' matrix using 1:2:3 with image notitle
set title 'head 1'
set size ratio -1
set xrange [-0.5:63.5]
set yrange [63.5:-0.5]
set xlabel 'key position j'
set ylabel 'query position i'
plot 'bias_h1.csv' matrix using 1:2:3 with image notitle
set title 'head 2'
set size ratio -1
set xrange [-0.5:63.5]
set yrange [63.5:-0.5]
set xlabel 'key position j'
set ylabel 'query position i'
plot 'bias_h2.csv' matrix using 1:2:3 with image notitle
set title 'head 3'
set size ratio -1
set xrange [-0.5:63.5]
set yrange [63.5:-0.5]
set xlabel 'key position j'
set ylabel 'query position i'
plot 'bias_h3.csv' matrix using 1:2:3 with image notitle
unset multiplot
