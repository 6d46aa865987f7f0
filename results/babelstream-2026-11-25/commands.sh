#!/usr/bin/env bash
# How the files in this folder were made (2 vCPUs of an AMD EPYC, PoCL 3.1; BabelStream
# commit 57637d5 built by scripts/babelstream-build.sh into target/babelstream/).
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/babelstream-2026-11-25
scripts/babelstream-compare.sh target/babelstream/ocl-stream opencl 5 $D/babelstream-pocl.csv 2>&1 | tee $D/babelstream-pocl.log
OMP_NUM_THREADS=2 scripts/babelstream-compare.sh target/babelstream/omp-stream host 5 $D/babelstream-host.csv 2>&1 | tee $D/babelstream-host.log
