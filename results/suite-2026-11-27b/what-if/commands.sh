#!/usr/bin/env bash
# The what-if of docs/models.md §2.4 ("Transposes move by the transposing sweep"): runs 48-51,
# measured before the calibration had a transposing sweep, assessed against their own
# calibrations with the sweep of the two calibrations in this folder spliced in. Those were
# made on the same Intel Xeon VM on 2026-11-27 (02:19-02:39 UTC), an hour before run 52, with
# the binary of commit ddb8393's sources (`harness calibrate --device host|opencl -o FILE`;
# their logs beside them). Not a measurement beside those runs: the sweep's rates are today's.
set -euo pipefail
cd "$(dirname "$0")/../../.."
H=./target/release/harness
W=results/suite-2026-11-27b/what-if
OUT=${1:-/tmp/what-if}
for dev in host-intel-r-xeon-r-processor opencl-pthread-skylake-avx512-intel-r-xeon-r-processor; do
  for r in 48 49 50 51; do
    read -r _ dir cal < <(grep "^$r " scripts/suite-runs.txt)
    [ -d "$dir/$dev.suite" ] || continue
    mkdir -p "$OUT/$r"
    python3 - "$cal/$dev.json" "$W/$dev.json" "$OUT/$r/$dev.calibration.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["transposes"] = json.load(open(sys.argv[2]))["transposes"]
json.dump(c, open(sys.argv[3], "w"))
PY
    "$H" validate-suite --from "$dir/$dev.suite" --calibration "$OUT/$r/$dev.calibration.json" \
      --output-dir "$OUT/$r" > "$OUT/$r/$dev.log" 2>&1
    grep "^calibrated " "$OUT/$r/$dev.log" | sed "s/^/run $r ${dev:0:6}: /"
  done
done
