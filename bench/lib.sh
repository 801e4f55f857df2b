# bench/lib.sh: the figures' helpers the benchmark scripts share (sourced:
# `. "$(dirname "$0")/lib.sh"`).
#
# median: the median of the numbers on standard input, one a line (the
#   mean of the two middle ones for an even count; "nan" for none).
# best: the smallest of them.
# calc EXPR: floating-point arithmetic by awk, printed with $CALC_FMT
#   (default %.2f).
median() {
  sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
best() { sort -g | head -n 1; }
calc() { awk "BEGIN { printf \"${CALC_FMT:-%.2f}\", $1 }"; }
