#!/usr/bin/env bash
# Collect the GPU evidence the README's H100 table needs, on a machine with an NVIDIA GPU
# and no Rust toolchain: build here with `cargo build --release`, carry
# target/release/harness to the GPU machine, and run this script from the repository root.
# Everything goes to $OUT (default ./gpu-evidence): the device list, a quick and a full
# calibration with their wall times, and the logs.
set -uo pipefail
OUT="${OUT:-gpu-evidence}"
BIN="${HARNESS_BIN:-./target/release/harness}"
mkdir -p "$OUT"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || true
"$BIN" devices > "$OUT/devices.txt" 2>&1
"$BIN" devices --json > "$OUT/devices.json" 2> "$OUT/devices.err"
for mode in quick full; do
  flag=""; [ "$mode" = quick ] && flag="--quick"
  start=$(date +%s%N)
  "$BIN" calibrate --device cuda $flag -o "$OUT/cuda-$mode.json" > "$OUT/cuda-$mode.txt" 2>&1
  status=$?
  echo "exit $status wall $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$OUT/cuda-$mode.txt"
done
# The same device through OpenCL, when the NVIDIA ICD can be registered.
"$BIN" calibrate --device opencl --quick -o "$OUT/opencl-quick.json" > "$OUT/opencl-quick.txt" 2>&1 || true
ls -la "$OUT"
