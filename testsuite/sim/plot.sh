#!/bin/sh
# --plot draws the JCT CDF of every policy run into the directory and the
# GPU allocation over time of each run (skipped without gnuplot).
#   plot.sh POLLUX_SIM TRACES_ROOT
set -eu
sim=$1
traces=$2
if ! command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
  [ "${POLLUX_TESTS_NO_SKIP:-0}" = 1 ] && { echo "FAILED: no gnuplot (POLLUX_TESTS_NO_SKIP=1)" >&2; exit 1; }
  echo "SKIP: no gnuplot"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n 21 "$traces/workloads/workload-3.csv" >"$tmp/w3.csv"
"$sim" --policy tiresias --plot "$tmp/plots" "$tmp/w3.csv" >/dev/null
"$sim" --policy pollux --plot "$tmp/plots" "$tmp/w3.csv" >/dev/null
# An auto-scaled run keeps its own files (named with its mode) and joins the CDF.
"$sim" --policy pollux --autoscale goodput --plot "$tmp/plots" "$tmp/w3.csv" >/dev/null
for f in pollux-goodput-w3-gpus.png pollux-goodput-w3.scale; do
  test -s "$tmp/plots/$f" || { echo "FAIL: $f missing or empty"; ls -l "$tmp/plots"; exit 1; }
done
grep -q pollux-goodput "$tmp/plots/w3-jct-cdf.svg"
for f in w3-jct-cdf.svg tiresias-w3-gpus.png pollux-w3-gpus.png pollux-w3.jct pollux-w3.gpus pollux-w3.usage; do
  test -s "$tmp/plots/$f" || { echo "FAIL: $f missing or empty"; ls -l "$tmp/plots"; exit 1; }
done
# The CDF shows both policies; the PNG is a PNG.
grep -q tiresias "$tmp/plots/w3-jct-cdf.svg"
grep -q pollux "$tmp/plots/w3-jct-cdf.svg"
head -c 8 "$tmp/plots/pollux-w3-gpus.png" | grep >/dev/null PNG
[ "$(wc -l <"$tmp/plots/pollux-w3.gpus")" -eq 20 ]
echo "plots written: $(ls "$tmp/plots" | tr '\n' ' ')"
