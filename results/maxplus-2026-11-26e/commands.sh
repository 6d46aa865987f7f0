#!/usr/bin/env bash
# The max-plus validations of the README (2 vCPUs of an AMD EPYC, PoCL 3.1): each device
# calibrated right before its graphs, since this shared VM's cache and memory rates move by
# a third within minutes. Run 9, 2026-11-26: the same commands as run 8, the first whose calibrations warm every point (point_warmup_seconds).
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/maxplus-2026-11-26e
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
