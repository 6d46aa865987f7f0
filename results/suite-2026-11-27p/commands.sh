#!/usr/bin/env bash
# Run 66 of the validation suite: how every file in this folder was made (2 vCPUs of an Intel
# Xeon VM that reports model 167 and a 480 MiB L3, a machine type new to the suite; PoCL 3.1).
# Each device is calibrated right before its suite. Run 65's code with the gathering sweep in
# the calibration, by which SOR's copy back from its skewed layout moves between levels
# (docs/models.md §2.4), code of commit f4028da6.
# The four commands of run 23 into this folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/suite-2026-11-27p
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
