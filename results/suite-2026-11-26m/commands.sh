#!/usr/bin/env bash
# Run 43 of the validation suite: how every file in this folder was made (2 vCPUs of an AMD
# EPYC, PoCL 3.1). Each device is calibrated right before its suite.
# The paired check of the warmed single-quantity measurements (each point of the serialization
# sweeps, the latency chase, the transfers and the launch overhead discards runs for 2 ms
# before its samples, where it had discarded two launches): each device is calibrated twice in
# a row, by this binary (calibrations/) and by that of commit 86fa3f7d, whose points discard
# two launches (calibrations-cold/; OLD names that binary, built from that commit), then runs
# its suite against the first, and the same measurements are assessed again against the
# second (cold-points/), so the two calibrations' line rates meet the same runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/suite-2026-11-26m
H=./target/release/harness
OLD=${OLD:?set OLD to a harness built from commit 86fa3f7d}
echo "start $(date +%s)"
for dev in host opencl; do
  $H calibrate --device $dev --output-dir $D/calibrations > $D/calibrate-$dev.log 2>&1
  $OLD calibrate --device $dev --output-dir $D/calibrations-cold > $D/calibrate-cold-$dev.log 2>&1
  C=$(ls $D/calibrations/$dev*.json | head -1)
  $H validate-suite --device $dev --calibration $C --output-dir $D > $D/suite-$dev.log 2>&1
  echo "$dev $(date +%s)"
done
for dev in host-amd-epyc opencl-pthread-skylake-avx512-amd-epyc; do
  $H validate-suite --from $D/$dev.suite --calibration $D/calibrations-cold/$dev.json \
    --output-dir $D/cold-points > $D/cold-points-$dev.log 2>&1
  scripts/extrap-compare.sh $D/$dev.suite/*.json --csv $D/extrap-suite-$dev.csv > $D/extrap-$dev.log 2>&1
done
echo "done $(date +%s)"
