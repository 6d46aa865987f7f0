#!/usr/bin/env bash
# Run 52 of the validation suite: how every file in this folder was made (2 vCPUs of an Intel
# Xeon, model 207, 260 MiB L3 as the VM reports it; PoCL 3.1). Each device is calibrated right
# before its suite. The fifth run on this machine, the first with the transposing sweep in the
# calibration (a j,k transpose's rate per working set, by which the ADI and line-solve
# transposes now move between memory levels: docs/models.md §2.4) and with the strided sweeps
# reaching 4x the reported last-level cache: their out-of-sample check. The four commands of
# run 23 into this folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/suite-2026-11-27b
H=./target/release/harness
HOST=host-intel-r-xeon-r-processor
OCL=opencl-pthread-skylake-avx512-intel-r-xeon-r-processor
echo "start $(date +%s)"
$H calibrate --device host --output-dir $D/calibrations > $D/calibrate-host.log 2>&1
$H validate-suite --device host --calibration $D/calibrations/$HOST.json --output-dir $D > $D/suite-host.log 2>&1
echo "host $(date +%s)"
$H calibrate --device opencl --output-dir $D/calibrations > $D/calibrate-opencl.log 2>&1
# PoCL's calibration found a level `L4` up to 512 MiB (as run 49's did), so its targets doubled
# (grids 11,588, sor-rb 16,388, 3-D 516 and 652): for the session's time this suite was stopped
# when it reached sor-rb (its first four cases are in $D/$OCL.suite/), and the three 3-D cases
# ran by the second command into $D/opencl-3d; sor-rb ran last, alone, by the third (with the
# binary of commit 5839e0a: the run's code, plus a figure and a refactor that changes no number).
$H validate-suite --device opencl --calibration $D/calibrations/$OCL.json --output-dir $D > $D/suite-opencl.log 2>&1
$H validate-suite --device opencl --workloads adi,lu-ssor,line-solve --calibration $D/calibrations/$OCL.json --output-dir $D/opencl-3d > $D/suite-opencl-3d.log 2>&1
$H validate-suite --device opencl --workloads sor-rb --calibration $D/calibrations/$OCL.json --output-dir $D/opencl-sorrb > $D/suite-opencl-sorrb.log 2>&1
# The three parts' cases assessed together (the files copied into one folder):
cp $D/opencl-3d/$OCL.suite/*.json $D/opencl-sorrb/$OCL.suite/*.json $D/$OCL.suite/
$H validate-suite --from $D/$OCL.suite --calibration $D/calibrations/$OCL.json --output-dir $D > $D/suite-opencl-from.log 2>&1
echo "opencl $(date +%s)"
for dev in $HOST $OCL; do
  scripts/extrap-compare.sh $D/$dev.suite/*.json --csv $D/extrap-suite-$dev.csv > $D/extrap-$dev.log 2>&1
done
echo "done $(date +%s)"
