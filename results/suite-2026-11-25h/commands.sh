#!/usr/bin/env bash
# Run 14 of the validation suite: how every file in this folder was made (2 vCPUs of an AMD
# EPYC, PoCL 3.1). Each device is calibrated right before its suite.
# A trial, not kept: the binary was built with parallel-twins.patch (in this folder) applied to
# 9bfb106 (`git apply results/suite-2026-11-25h/parallel-twins.patch`, then cargo build --release):
# the host twins of the grid-wide kernels (ADI sweeps, line solves, the j,k swap, red-black SOR,
# the skew copies) on all cores and the ssor_plane twin row by row. The host half measures those
# twins; the PoCL half runs PoCL's kernels, calibration and the model exactly as main does (the
# patch changes only the host twins and the one-thread references, whose results are identical).
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/suite-2026-11-25h
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
