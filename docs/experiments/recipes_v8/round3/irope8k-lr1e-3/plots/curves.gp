# gnuplot curves.gp (in this directory): curves_TAG.{png,svg}, the loss curves of each scheme's runs
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
set xlabel 'step'
set ylabel 'loss (nats/token)'
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo noenhanced size 900,500 } else { set terminal png truecolor noenhanced size 900,500 }
set output 'curves_rope-attn-3-chunk-16-global-nope-.png'
set title 'rope+attn(3*chunk=16:global,nope)'
plot 'curves_rope-attn-3-chunk-16-global-nope-.dat' index 0 with lines dashtype 2 lc 1 title 'seed 1001 train', 'curves_rope-attn-3-chunk-16-global-nope-.dat' index 1 with linespoints lc 1 title 'seed 1001 validation', \
     'curves_rope-attn-3-chunk-16-global-nope-.dat' index 2 with lines dashtype 2 lc 2 title 'seed 1002 train', 'curves_rope-attn-3-chunk-16-global-nope-.dat' index 3 with linespoints lc 2 title 'seed 1002 validation', \
     'curves_rope-attn-3-chunk-16-global-nope-.dat' index 4 with lines dashtype 2 lc 3 title 'seed 1003 train', 'curves_rope-attn-3-chunk-16-global-nope-.dat' index 5 with linespoints lc 3 title 'seed 1003 validation', \
     'curves_rope-attn-3-chunk-16-global-nope-.dat' index 6 with lines dashtype 2 lc 4 title 'seed 1004 train', 'curves_rope-attn-3-chunk-16-global-nope-.dat' index 7 with linespoints lc 4 title 'seed 1004 validation'
set output
set terminal svg noenhanced size 900,500
set output 'curves_rope-attn-3-chunk-16-global-nope-.svg'
set title 'rope+attn(3*chunk=16:global,nope)'
plot 'curves_rope-attn-3-chunk-16-global-nope-.dat' index 0 with lines dashtype 2 lc 1 title 'seed 1001 train', 'curves_rope-attn-3-chunk-16-global-nope-.dat' index 1 with linespoints lc 1 title 'seed 1001 validation', \
     'curves_rope-attn-3-chunk-16-global-nope-.dat' index 2 with lines dashtype 2 lc 2 title 'seed 1002 train', 'curves_rope-attn-3-chunk-16-global-nope-.dat' index 3 with linespoints lc 2 title 'seed 1002 validation', \
     'curves_rope-attn-3-chunk-16-global-nope-.dat' index 4 with lines dashtype 2 lc 3 title 'seed 1003 train', 'curves_rope-attn-3-chunk-16-global-nope-.dat' index 5 with linespoints lc 3 title 'seed 1003 validation', \
     'curves_rope-attn-3-chunk-16-global-nope-.dat' index 6 with lines dashtype 2 lc 4 title 'seed 1004 train', 'curves_rope-attn-3-chunk-16-global-nope-.dat' index 7 with linespoints lc 4 title 'seed 1004 validation'
set output
