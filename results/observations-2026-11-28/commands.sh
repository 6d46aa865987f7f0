#!/usr/bin/env bash
# Two series made after suite run 75 (2026-11-28, the code of commit 6d84ebbb, 2 vCPUs of an Intel Xeon VM
# of model 167, PoCL 3.1), to look at the two cases `calibrated` misses the same way in every
# recent run: PoCL's SOR diagonals over a wider range of N than the suite's window (three
# repeats a size, ten iterations), and the host's ADI sweeps from the window's top (N = 127)
# to past the target (two iterations, three repeats). Each series checks its warm-up run
# against the host implementation.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/observations-2026-11-28
H=./target/release/harness
$H series sor --sizes 1402,2805,4000,5610,8000,11220,15868 --repeat 3 --max-repeat 3 --iters 10 -d opencl --output-dir $D
$H series adi --sizes 127,191,254,300,381,508 --repeat 3 --max-repeat 3 --iters 2 -d host --output-dir $D
