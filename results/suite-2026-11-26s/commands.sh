#!/usr/bin/env bash
# Run 49 of the validation suite: how every file in this folder was made (2 vCPUs of an Intel
# Xeon, model 207, 260 MiB L3 as the VM reports it; PoCL 3.1). Each device is calibrated right
# before its suite. The second run on this machine with one thread's rates, made after run 48
# with the same code (its repeat). The four commands of run 23 into this folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/suite-2026-11-26s
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
# The PoCL suite above was stopped after 4 of its 8 cases (vadd, triad, jacobi2d, sor) for the
# session's time: its calibration had found an `L4` plateau to 512 MiB, so the targets doubled
# (sor-rb at N = 16,388, about 80 s a run). Its summary was made from the 4 stored cases:
#   $H validate-suite --from $D/$OCL.suite --calibration $D/calibrations/$OCL.json --output-dir $D
# and the Extra-P comparison above was run on the host's 8 cases and those 4.
