#!/usr/bin/env bash
# Run 47 of the validation suite: how every file in this folder was made (2 vCPUs of an AMD
# EPYC, PoCL 3.1). Each device is calibrated right before its suite.
# The second out-of-sample check of the strided phases' one-after-the-other estimate. The four commands of run 23 into this folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/suite-2026-11-26q
H=./target/release/harness
echo "start $(date +%s)"
$H calibrate --device host --output-dir $D/calibrations > $D/calibrate-host.log 2>&1
$H validate-suite --device host --calibration $D/calibrations/host-amd-epyc.json --output-dir $D > $D/suite-host.log 2>&1
echo "host $(date +%s)"
$H calibrate --device opencl --output-dir $D/calibrations > $D/calibrate-opencl.log 2>&1
$H validate-suite --device opencl --calibration $D/calibrations/opencl-pthread-skylake-avx512-amd-epyc.json --output-dir $D > $D/suite-opencl.log 2>&1
echo "opencl $(date +%s)"
for dev in host-amd-epyc opencl-pthread-skylake-avx512-amd-epyc; do
  scripts/extrap-compare.sh $D/$dev.suite/*.json --csv $D/extrap-suite-$dev.csv > $D/extrap-$dev.log 2>&1
done
echo "done $(date +%s)"
