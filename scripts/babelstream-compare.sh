#!/usr/bin/env bash
# BabelStream's own build and `harness babelstream` side by side on the same device, in
# alternating rounds so that drift on a shared machine hits both alike; prints each round and
# the median MB/s per kernel of each, and writes a CSV.
#
# The harness does not build BabelStream: build it yourself (its CMake fetches OpenCL headers,
# so on Debian compile its src/main.cpp with src/ocl/OCLStream.cpp, -DOCL, against
# opencl-clhpp-headers and -lOpenCL; or src/omp/OMPStream.cpp with -DOMP -fopenmp) and give
# the binary here.
#
# usage: scripts/babelstream-compare.sh BABELSTREAM_BINARY HARNESS_DEVICE [ROUNDS] [OUT.csv]
#   e.g. scripts/babelstream-compare.sh ./ocl-stream opencl 5 results/babelstream-pocl.csv
#        OMP_NUM_THREADS=2 scripts/babelstream-compare.sh ./omp-stream host 5
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ]; then
  sed -n '2,14p' "$0" >&2
  exit 2
fi
BS=$1
DEVICE=$2
ROUNDS=${3:-5}
OUT=${4:-}
HARNESS=${HARNESS:-target/release/harness}
[ -x "$BS" ] || { echo "error: $BS is not an executable BabelStream build" >&2; exit 2; }
[ -x "$HARNESS" ] || { echo "error: $HARNESS not found: cargo build --release first (or set HARNESS)" >&2; exit 2; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "round,tool,function,mbytes_per_sec" > "$TMP/all.csv"
for r in $(seq 1 "$ROUNDS"); do
  "$BS" --float -s 33554432 -n 100 > "$TMP/bs.txt"
  awk -v r="$r" '/^(Copy|Mul|Add|Triad|Dot) /{print r",babelstream,"$1","$2}' "$TMP/bs.txt" >> "$TMP/all.csv"
  "$HARNESS" babelstream --device "$DEVICE" --json 2>/dev/null > "$TMP/h.json"
  python3 - "$TMP/h.json" "$r" >> "$TMP/all.csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in d["kernels"]:
    print(f'{sys.argv[2]},harness,{k["name"]},{k["mbytes_per_sec"]:.3f}')
PY
  echo "round $r done" >&2
done
python3 - "$TMP/all.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f'{"Function":8} {"BabelStream MB/s":>18} {"harness MB/s":>14} {"harness/BabelStream":>20}   (medians over rounds)')
for f in ["Copy", "Mul", "Add", "Triad", "Dot"]:
    med = {t: statistics.median(float(r["mbytes_per_sec"]) for r in rows if r["tool"] == t and r["function"] == f)
           for t in ["babelstream", "harness"]}
    print(f'{f:8} {med["babelstream"]:18.1f} {med["harness"]:14.1f} {med["harness"]/med["babelstream"]:20.3f}')
PY
if [ -n "$OUT" ]; then
  mkdir -p "$(dirname "$OUT")"
  cp "$TMP/all.csv" "$OUT.tmp" && mv "$OUT.tmp" "$OUT"
  echo "wrote $OUT" >&2
fi
