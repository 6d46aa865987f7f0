#!/usr/bin/env bash
# Assess every stored validation-suite run again with the current code (no device needed):
# the measurements stay as taken, the predictions are made anew. Each run's cases are read
# from its folder and the new assessment is written under OUT/<run>/ (the stored files are
# not touched unless OUT is `--in-place`). Prints one line per run and device: the
# calibrated variant's median / max |error| and how often its interval held and was ≤ 2×.
#
# usage: scripts/reassess-suites.sh OUT|--in-place [HARNESS]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/reassess-suites.sh OUT|--in-place [HARNESS]}
harness=${2:-./target/release/harness}
[ -x "$harness" ] || { echo "error: $harness not found: build it with cargo build --release" >&2; exit 2; }
host=host-amd-epyc
pocl=opencl-pthread-skylake-avx512-amd-epyc
# run name, folder, calibration folder (the calibration each run was assessed against)
runs=(
  "1 results/suite-repeat calibrations"
  "2 results calibrations"
  "3 results/suite-2026-11-24 results/suite-2026-11-24/calibrations"
  "4 results/suite-2026-11-24b results/suite-2026-11-24b/calibrations"
  "5 results/suite-2026-11-24c results/suite-2026-11-24c/calibrations"
  "6 results/suite-2026-11-24d results/suite-2026-11-24c/calibrations"
  "7 results/suite-2026-11-25 results/suite-2026-11-25/calibrations"
  "8 results/suite-2026-11-25b results/suite-2026-11-25b/calibrations"
  "9 results/suite-2026-11-25c results/suite-2026-11-25c/calibrations"
  "10 results/suite-2026-11-25d results/suite-2026-11-25d/calibrations"
  "11 results/suite-2026-11-25e results/suite-2026-11-25e/calibrations"
  "12 results/suite-2026-11-25f results/suite-2026-11-25f/calibrations"
  "13 results/suite-2026-11-25g results/suite-2026-11-25g/calibrations"
  "14 results/suite-2026-11-25h results/suite-2026-11-25h/calibrations"
  "15 results/suite-2026-11-25i results/suite-2026-11-25i/calibrations"
  "16 results/suite-2026-11-25j results/suite-2026-11-25j/calibrations"
  "17 results/suite-2026-11-25k results/suite-2026-11-25k/calibrations"
  "18 results/suite-2026-11-25l results/suite-2026-11-25l/calibrations"
  "19 results/suite-2026-11-25m results/suite-2026-11-25m/calibrations"
  "20 results/suite-2026-11-25n results/suite-2026-11-25n/calibrations"
  "21 results/suite-2026-11-25o results/suite-2026-11-25o/calibrations"
  "22 results/suite-2026-11-25p results/suite-2026-11-25p/calibrations"
  "23 results/suite-2026-11-25q results/suite-2026-11-25q/calibrations"
  "24 results/suite-2026-11-25r results/suite-2026-11-25r/calibrations"
  "25 results/suite-2026-11-25s results/suite-2026-11-25s/calibrations"
  "26 results/suite-2026-11-25t results/suite-2026-11-25t/calibrations"
  "27 results/suite-2026-11-25u results/suite-2026-11-25u/calibrations"
  "28 results/suite-2026-11-25v results/suite-2026-11-25v/calibrations"
  "29 results/suite-2026-11-25w results/suite-2026-11-25w/calibrations"
  "30 results/suite-2026-11-25x results/suite-2026-11-25x/calibrations"
  "31 results/suite-2026-11-26 results/suite-2026-11-26/calibrations"
  "32 results/suite-2026-11-26b results/suite-2026-11-26b/calibrations"
  "33 results/suite-2026-11-26c results/suite-2026-11-26c/calibrations"
  "34 results/suite-2026-11-26d results/suite-2026-11-26d/calibrations"
  "35 results/suite-2026-11-26e results/suite-2026-11-26e/calibrations"
  "36 results/suite-2026-11-26f results/suite-2026-11-26f/calibrations"
  "37 results/suite-2026-11-26g results/suite-2026-11-26g/calibrations"
  "38 results/suite-2026-11-26h results/suite-2026-11-26h/calibrations"
  "39 results/suite-2026-11-26i results/suite-2026-11-26i/calibrations"
)
for r in "${runs[@]}"; do
  read -r name dir cal <<<"$r"
  for dev in $host $pocl; do
    [ -d "$dir/$dev.suite" ] || continue
    if [ "$out" = --in-place ]; then dest=$dir; else dest=$out/$name; mkdir -p "$dest"; fi
    "$harness" validate-suite --from "$dir/$dev.suite" --calibration "$cal/$dev.json" \
      --output-dir "$dest" > "$dest/reassess-$dev.log" 2>&1 \
      || { echo "error: run $name ($dev) failed: see $dest/reassess-$dev.log" >&2; exit 1; }
    python3 - "$dest/$dev.suite.json" "$name" "$dev" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = [v for v in d["summary"] if v["variant"] == "calibrated"][0]
e = s["error"]
print(f"run {sys.argv[2]} {sys.argv[3][:6]}: calibrated {e['median']:.1f} % / {e['max']:.1f} %,"
      f" holds {100 * s['interval_holds']:.0f} %, <= 2x {100 * s['interval_within_2x']:.0f} %")
PY
  done
done
