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
# run name, folder, calibration folder (the calibration each run was assessed against); each
# device's cases are the folder's <device>.suite/, its calibration <calibration folder>/<device>.json
mapfile -t runs < <(grep -v '^#' scripts/suite-runs.txt)
for r in "${runs[@]}"; do
  read -r name dir cal <<<"$r"
  for suite in "$dir"/*.suite/; do
    dev=$(basename "$suite" .suite)
    [ -f "$cal/$dev.json" ] || continue
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
