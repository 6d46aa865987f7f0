#!/usr/bin/env bash
# Run 69 of the validation suite: how every file in this folder was made (2 vCPUs of the
# Intel Xeon VM of runs 66-68, model 167, a 480 MiB L3 reported; PoCL 3.1). Each device is
# calibrated right before its suite. Run 68's code with a compute-bound phase taken at the
# roofline only while its traffic at the target's rate stays within 3/4 of its time
# (docs/models.md §2.4, "Saturated"), commit 83559940. The four commands of run 23 into
# this folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/suite-2026-11-27s
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
