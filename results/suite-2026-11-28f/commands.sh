#!/usr/bin/env bash
# Run 75 of the validation suite: how every file in this folder was made (2 vCPUs of an
# Intel Xeon VM of model 167 as runs 66-74, a 480 MiB L3 reported; PoCL 3.1). Each device is
# calibrated right before its suite. Commit 507feb16, the code of run 74 (77d42ee2) with the
# hyperplane-spread interval (c4a29b3d) and no change to any estimate: a repeat, out of sample,
# to see whether run 74's result holds on a fresh calibration and fresh series. The four
# commands of run 23 into this folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/suite-2026-11-28f
H=./target/release/harness
HOST=host-intel-r-xeon-r-processor
OCL=opencl-pthread-skylake-avx512-intel-r-xeon-r-processor
echo "start $(date +%s)"
$H calibrate --device host --output-dir $D/calibrations > $D/calibrate-host.log 2>&1
$H validate-suite --device host --calibration $D/calibrations/$HOST.json --output-dir $D > $D/suite-host.log 2>&1
echo "host $(date +%s)"
$H calibrate --device opencl --output-dir $D/calibrations > $D/calibrate-opencl.log 2>&1
$H validate-suite --device opencl --calibration $D/calibrations/$OCL.json --output-dir $D > $D/suite-opencl.log 2>&1
echo "opencl $(date +%s)"
for dev in $HOST $OCL; do
  scripts/extrap-compare.sh $D/$dev.suite/*.json --csv $D/extrap-suite-$dev.csv > $D/extrap-$dev.log 2>&1
done
echo "done $(date +%s)"
