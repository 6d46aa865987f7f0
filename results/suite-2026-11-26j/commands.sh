#!/usr/bin/env bash
# Run 40 of the validation suite: how every file in this folder was made (2 vCPUs of an AMD
# EPYC, PoCL 3.1). Each device is calibrated right before its suite.
# The paired check of the bandwidth sweep's warmed visits (each visit discards runs for 2 ms
# before its samples, where it had discarded two launches): each device is calibrated twice in
# a row, by this binary (calibrations/) and by that of commit a3c74683, whose visits discard two
# launches (calibrations-short/; OLD names that binary, built from that commit), then runs its
# suite against the first, and the same measurements are assessed again against the second
# (short-sweep/), so the two sweeps' rates meet the same runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/suite-2026-11-26j
H=./target/release/harness
OLD=${OLD:?set OLD to a harness built from commit a3c74683}
echo "start $(date +%s)"
for dev in host opencl; do
  $H calibrate --device $dev --output-dir $D/calibrations > $D/calibrate-$dev.log 2>&1
  $OLD calibrate --device $dev --output-dir $D/calibrations-short > $D/calibrate-short-$dev.log 2>&1
  C=$(ls $D/calibrations/$dev*.json | head -1)
  $H validate-suite --device $dev --calibration $C --output-dir $D > $D/suite-$dev.log 2>&1
  echo "$dev $(date +%s)"
done
for dev in host-amd-epyc opencl-pthread-skylake-avx512-amd-epyc; do
  $H validate-suite --from $D/$dev.suite --calibration $D/calibrations-short/$dev.json \
    --output-dir $D/short-sweep > $D/short-sweep-$dev.log 2>&1
  scripts/extrap-compare.sh $D/$dev.suite/*.json --csv $D/extrap-suite-$dev.csv > $D/extrap-$dev.log 2>&1
done
echo "done $(date +%s)"
