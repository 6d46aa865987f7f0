#!/usr/bin/env bash
# The what-if of docs/models.md §2.4 ("Transfer": the sweep reaches the targets' transfers):
# runs 52-56, measured with calibrations whose transfer sweep stopped at 64 MiB, assessed
# against their own calibrations with the transfer sweep of the two calibrations in this
# folder spliced in (4 KiB to 1 GiB). Those were made on the same Intel Xeon VM on 2026-11-27
# (09:32-09:43 UTC), right after run 56, with the sources of the commit that extended the
# sweep (`harness calibrate --device host|opencl --output-dir DIR`; their logs beside them).
# Not a measurement beside those runs: the sweep's rates are today's. Prints each run's
# calibrated median / max with its own calibration and with the sweep spliced in.
set -euo pipefail
cd "$(dirname "$0")/../../.."
H=./target/release/harness
W=results/suite-2026-11-27f/what-if-transfers
OUT=${1:-/tmp/what-if-transfers}
for dev in host-intel-r-xeon-r-processor opencl-pthread-skylake-avx512-intel-r-xeon-r-processor; do
  for r in 52 53 54 55 56; do
    read -r _ dir cal < <(grep "^$r " scripts/suite-runs.txt)
    [ -d "$dir/$dev.suite" ] || continue
    mkdir -p "$OUT/own/$r" "$OUT/spliced/$r"
    python3 - "$cal/$dev.json" "$W/$dev.json" "$OUT/spliced/$r/$dev.calibration.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["transfers"] = json.load(open(sys.argv[2]))["transfers"]
json.dump(c, open(sys.argv[3], "w"))
PY
    "$H" validate-suite --from "$dir/$dev.suite" --calibration "$cal/$dev.json" \
      --output-dir "$OUT/own/$r" > "$OUT/own/$r/$dev.log" 2>&1
    "$H" validate-suite --from "$dir/$dev.suite" --calibration "$OUT/spliced/$r/$dev.calibration.json" \
      --output-dir "$OUT/spliced/$r" > "$OUT/spliced/$r/$dev.log" 2>&1
    echo "run $r ${dev:0:6}: own $(grep '^calibrated ' "$OUT/own/$r/$dev.log" | head -1)"
    echo "run $r ${dev:0:6}: spliced $(grep '^calibrated ' "$OUT/spliced/$r/$dev.log" | head -1)"
  done
done
