#!/bin/sh
# plot.sh CSV OUTDIR: the stories260K study's plots from `pelab eval --csv` output (gnuplot + awk).
#   OUTDIR/loss_vs_length.png   loss (nonoverlap and sliding) against the evaluated length, one line per rule
#   OUTDIR/loss_by_position.png loss by position bucket at the longest length, training length marked
set -eu
csv=$1 out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the CSV's quoted fields (the scheme spec) hold commas: blank them out, then split on commas
sed 's/"[^"]*"/Q/g' "$csv" > "$tmp/flat.csv"
csv=$tmp/flat.csv
split='BEGIN { FS = "," }'
rules=$(awk "$split"' NR > 1 && $1 == "length" { print $5 }' "$csv" | awk '!seen[$0]++')
train_len=$(awk "$split"' NR == 2 { print $8 }' "$csv")
max_len=$(awk "$split"' NR > 1 && $1 == "length" && $9 > m { m = $9 } END { print m }' "$csv")
plot_len="" plot_pos="" i=0
for r in $rules; do
    i=$((i + 1)) # one colour per rule in both plots
    f=$(echo "$r" | tr ':' '_')
    awk "$split"' $1 == "length" && $5 == r && $10 == "nonoverlap" { print $9, $17 }' r="$r" "$csv" > "$tmp/$f.non"
    awk "$split"' $1 == "length" && $5 == r && $10 == "sliding" { print $9, $17 }' r="$r" "$csv" > "$tmp/$f.sli"
    awk "$split"' $1 == "bucket" && $5 == r && $9 == len { print ($13 + $14) / 2, $17 }' r="$r" len="$max_len" "$csv" > "$tmp/$f.pos"
    plot_len="$plot_len '$tmp/$f.non' using 1:2 with linespoints lc $i title '$r nonoverlap', '$tmp/$f.sli' using 1:2 with linespoints lc $i dashtype 2 pt 6 title '$r sliding',"
    plot_pos="$plot_pos '$tmp/$f.pos' using 1:2 with linespoints lc $i title '$r',"
done
gnuplot <<GP
set terminal pngcairo size 1000,600 noenhanced
# gnuplot cycles 8 colours: four more, so that up to 12 rules never share one
set linetype 9 lc rgb '#8b4513'
set linetype 10 lc rgb '#ff1493'
set linetype 11 lc rgb '#2f4f4f'
set linetype 12 lc rgb '#9acd32'
set output '$out/loss_vs_length.png'
set logscale x 2
set xlabel 'evaluated length (tokens)'
set ylabel 'loss (nats/token)'
set key outside right
set arrow from $train_len, graph 0 to $train_len, graph 1 nohead dashtype 3
set label 'training length $train_len' at $train_len, graph 0.95 offset 0.5,0
plot ${plot_len%,}
set output '$out/loss_by_position.png'
unset logscale x
unset arrow
unset label
set xlabel 'position in a $max_len-token window (bucket middle)'
set arrow from $train_len, graph 0 to $train_len, graph 1 nohead dashtype 3
set label 'training length $train_len' at $train_len, graph 0.95 offset 0.5,0
plot ${plot_pos%,}
GP
