#!/usr/bin/env bash
# The max-plus validations of the README (2 vCPUs of an Intel Xeon VM, model 207, PoCL 3.1): each device
# calibrated right before its graphs, since this shared VM's cache and memory rates move by
# a third within minutes. Run 10, 2026-11-27: the same commands as run 9, the first on the Intel VM of suite runs 48-59, code of commit 86b4ef0f.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/maxplus-2026-11-27
H=./target/release/harness
for dev in host opencl; do
  $H calibrate --device $dev --output-dir $D/calibrations > $D/calibrate-$dev.log 2>&1
  C=$(ls $D/calibrations/$dev*.json | grep -v '[.]maxplus[.]' | head -1)
  for g in triad vadd_z2; do
    $H validate-maxplus kernels/graphs/$g.toml --device $dev --calibration $C \
      --sizes 2^16,2^18,2^20,2^22,2^24 --output-dir $D/maxplus --plot-dir $D/plots > $D/maxplus-$dev-$g.log 2>&1
  done
  $H validate-maxplus kernels/graphs/jacobi5.toml --device $dev --calibration $C \
    --sizes 256,512,1024,2048 --output-dir $D/maxplus --plot-dir $D/plots > $D/maxplus-$dev-jacobi5.log 2>&1
done
