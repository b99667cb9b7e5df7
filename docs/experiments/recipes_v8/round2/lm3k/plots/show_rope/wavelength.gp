# gnuplot wavelength.gp (in this directory): wavelength.png, wavelength.svg
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
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo noenhanced size 1000,600 } else { set terminal png truecolor noenhanced size 1000,600 }
set output 'wavelength.png'
set title "wavelength 2 pi / theta_j per rotary pair\nbelow L a pair turns fully inside the training window; above it, positions past L are new angles"
set key top left inside
set xlabel 'pair j (fastest first)'
set ylabel 'wavelength (positions)'
set logscale y
set xrange [0:7]
plot 'wavelength.csv' skip 1 using 1:2 with linespoints lc rgb '#0072b2' pt 1 pi 1 title 'none', 'wavelength.csv' skip 1 using 1:3 with linespoints lc rgb '#d55e00' pt 2 pi 1 title 'pi:4', 'wavelength.csv' skip 1 using 1:4 with linespoints lc rgb '#3cb44b' pt 3 pi 1 title 'ntk:4', 'wavelength.csv' skip 1 using 1:5 with linespoints lc rgb '#f032e6' pt 4 pi 1 title 'yarn:4', 64 with lines dt 2 lc rgb 'black' title 'training length L = 64'
set terminal svg noenhanced size 1000,600
set output 'wavelength.svg'
set title "wavelength 2 pi / theta_j per rotary pair\nbelow L a pair turns fully inside the training window; above it, positions past L are new angles"
set key top left inside
set xlabel 'pair j (fastest first)'
set ylabel 'wavelength (positions)'
set logscale y
set xrange [0:7]
plot 'wavelength.csv' skip 1 using 1:2 with linespoints lc rgb '#0072b2' pt 1 pi 1 title 'none', 'wavelength.csv' skip 1 using 1:3 with linespoints lc rgb '#d55e00' pt 2 pi 1 title 'pi:4', 'wavelength.csv' skip 1 using 1:4 with linespoints lc rgb '#3cb44b' pt 3 pi 1 title 'ntk:4', 'wavelength.csv' skip 1 using 1:5 with linespoints lc rgb '#f032e6' pt 4 pi 1 title 'yarn:4', 64 with lines dt 2 lc rgb 'black' title 'training length L = 64'
