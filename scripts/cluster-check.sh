#!/usr/bin/env bash
# The cluster prediction checked against real MPI runs on this machine (issue: predict a
# multi-node run as the DVM Predictor does). For jacobi2d and sor-rb at N (default 1026):
#   1. a one-core trace on the host (RAYON_NUM_THREADS=1), the "one processor";
#   2. the network file from an MPI ping-pong (fitted over the shadow edges' message sizes);
#   3. the prediction for 2 ranks (2x1) and for 4 ranks (2x2) on 2 cores with power 2 (each
#      rank gets half a core);
#   4. REPEATS measured runs of each under mpirun, each compared with the prediction.
# Writes everything under OUT (default results/cluster) and a summary.tsv; prints the summary.
# Needs the harness built with the MPI feature: cargo build --release --features mpi
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${1:-results/cluster}
BIN=${HARNESS_BIN:-target/release/harness}
N=${N:-1026}
ITERS=${ITERS:-200}
REPEATS=${REPEATS:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if ! command -v mpirun >/dev/null; then
  echo "error: mpirun not found: apt-get install openmpi-bin libopenmpi-dev" >&2
  exit 2
fi
if "$BIN" mpi-run jacobi2d -n 66 2>&1 | grep -q -- "--features mpi"; then
  echo "error: $BIN was built without MPI: cargo build --release --features mpi" >&2
  exit 2
fi
mkdir -p "$OUT"
edge=$(( (N - 2) * 4 ))
echo "== network: ping-pong between 2 ranks, line fitted from $((edge / 4)) to $((edge * 4)) bytes"
mpirun -np 2 "$BIN" mpi-pingpong --output "$OUT/network.toml" --fit "$((edge / 4))..$((edge * 4))" \
  | tee "$OUT/network.txt"

printf 'workload\tranks\tgrid\tpower\trepeat\tpredicted_ms\tmeasured_ms\terror_percent\tquantities_within\tquantities\n' \
  > "$OUT/summary.tsv"
for w in jacobi2d sor-rb; do
  echo "== $w: one-core trace on the host"
  RAYON_NUM_THREADS=1 "$BIN" run "$w" -n "$N" --iters "$ITERS" --device host --trace "$OUT/$w.trace.json" \
    > "$OUT/$w.trace.txt"
  for setting in "2 2x1 1" "4 2x2 2"; do
    read -r np grid power <<<"$setting"
    stem="$OUT/$w.$grid"
    "$BIN" predict-cluster --trace "$OUT/$w.trace.json" --grid "$grid" --network "$OUT/network.toml" \
      --power "$power" --output "$stem.predicted" > "$stem.predicted.txt"
    for r in $(seq 1 "$REPEATS"); do
      extra=()
      if [ "$np" -gt "$(nproc)" ]; then extra=(--oversubscribe); fi
      mpirun "${extra[@]}" -np "$np" "$BIN" mpi-run "$w" -n "$N" --iters "$ITERS" --grid "$grid" \
        --output "$stem.measured-$r" > "$stem.measured-$r.txt"
      "$BIN" compare-cluster "$stem.predicted.json" "$stem.measured-$r.json" --output "$stem.compare-$r" \
        > "$stem.compare-$r.txt"
      python3 - "$stem.compare-$r.json" "$w" "$np" "$grid" "$power" "$r" >> "$OUT/summary.tsv" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
root = next(r for r in c["rows"] if r["interval"] == "run" and r["quantity"] == "execution time")
within = sum(1 for r in c["rows"] if r["within"])
print("\t".join(sys.argv[2:7] + [f"{root['predicted']*1e3:.2f}", f"{root['measured']*1e3:.2f}",
      f"{root['error_percent']:+.1f}", str(within), str(len(c["rows"]))]))
PY
    done
  done
done
column -t -s $'\t' "$OUT/summary.tsv"
