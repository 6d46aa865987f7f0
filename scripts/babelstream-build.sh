#!/usr/bin/env bash
# Build BabelStream (https://github.com/UoB-HPC/BabelStream) from source for the two CPU devices
# the harness compares against: its OpenCL build (run on PoCL) and its OpenMP build (beside the
# host backend). BabelStream's CMake downloads OpenCL headers and fails offline, so this
# compiles its sources with g++ directly, against the OpenCL C++ bindings it carries (or
# Debian's opencl-clhpp-headers) and ocl-icd-opencl-dev
# (apt-get install opencl-clhpp-headers ocl-icd-opencl-dev g++).
#
# With --cuda it builds BabelStream's CUDA version instead (cuda-stream), with nvcc for the GPU
# at hand (-arch=native), the way its CMake model does (grid-stride kernels, unroll 4, NVML).
#
# usage: scripts/babelstream-build.sh [--cuda] [SOURCE] [OUT_DIR]
#   SOURCE   a BabelStream checkout or bare clone (default: clone the pinned commit below
#            into OUT_DIR/src; needs the network)
#   OUT_DIR  where ocl-stream and omp-stream go (default: target/babelstream)
# then:    scripts/babelstream-compare.sh target/babelstream/ocl-stream opencl 5
#          OMP_NUM_THREADS=2 scripts/babelstream-compare.sh target/babelstream/omp-stream host 5
set -euo pipefail
cd "$(dirname "$0")/.."
CUDA=0
if [ "${1:-}" = --cuda ]; then CUDA=1; shift; fi

REPO=https://github.com/UoB-HPC/BabelStream
COMMIT=57637d5  # the version the README's comparison was measured with
SRC=${1:-}
OUT=${2:-target/babelstream}
mkdir -p "$OUT"

if [ -z "$SRC" ]; then
  SRC=$OUT/src
  if [ ! -f "$SRC/src/main.cpp" ]; then
    git clone --quiet "$REPO" "$SRC" || { echo "error: could not clone $REPO (no network?): give a checkout as SOURCE" >&2; exit 2; }
    git -C "$SRC" checkout --quiet "$COMMIT"
  fi
fi
if [ ! -f "$SRC/src/main.cpp" ] && git --git-dir="$SRC" rev-parse --verify -q "$COMMIT^{commit}" >/dev/null 2>&1; then
  # A bare clone (a mirror): export the pinned commit's tree.
  rm -rf "$OUT/src" && mkdir -p "$OUT/src"
  git --git-dir="$SRC" archive "$COMMIT" | tar -x -C "$OUT/src"
  SRC=$OUT/src
fi
[ -f "$SRC/src/main.cpp" ] || { echo "error: $SRC is not a BabelStream checkout (no src/main.cpp)" >&2; exit 2; }
command -v g++ >/dev/null || { echo "error: g++ not found (apt-get install g++)" >&2; exit 2; }
S=$SRC/src

if [ "$CUDA" = 1 ]; then
  command -v nvcc >/dev/null || { echo "error: nvcc not found: --cuda needs the CUDA toolkit" >&2; exit 2; }
  # libnvidia-ml comes with the driver; the toolkit's stub stands in at link time where the
  # driver's library has no unversioned name.
  STUBS="$(dirname "$(command -v nvcc)")/../lib64/stubs"
  nvcc -O3 -std=c++17 -arch=native --extended-lambda -DCUDA -DDEFAULT -DGRID_STRIDE \
    -DUNROLL_FACTOR=4 -I"$S" -I"$S/cuda" "$S/main.cpp" "$S/cuda/CUDAStream.cu" \
    -L"$STUBS" -lnvidia-ml -o "$OUT/cuda-stream.tmp"
  mv "$OUT/cuda-stream.tmp" "$OUT/cuda-stream"
  echo "built $OUT/cuda-stream from $SRC ($(nvcc --version | tail -1))"
  exit 0
fi

# The OpenCL C++ bindings: the copy a checkout carries in src/ocl/CL/ where it has one
# (found first, next to OCLStream.h), else Debian's /usr/include/CL/cl2.hpp.
if [ ! -f "$S/ocl/CL/cl2.hpp" ] && [ ! -f /usr/include/CL/cl2.hpp ]; then
  echo "error: no OpenCL C++ headers (apt-get install opencl-clhpp-headers)" >&2; exit 2
fi
g++ -O3 -std=c++17 -DOCL -DCL_HPP_TARGET_OPENCL_VERSION=120 -DCL_HPP_MINIMUM_OPENCL_VERSION=120 \
  -I"$S" -I"$S/ocl" "$S/main.cpp" "$S/ocl/OCLStream.cpp" -lOpenCL \
  -o "$OUT/ocl-stream.tmp"
mv "$OUT/ocl-stream.tmp" "$OUT/ocl-stream"
g++ -O3 -std=c++17 -march=native -fopenmp -DOMP -I"$S" -I"$S/omp" \
  "$S/main.cpp" "$S/omp/OMPStream.cpp" -o "$OUT/omp-stream.tmp"
mv "$OUT/omp-stream.tmp" "$OUT/omp-stream"
echo "built $OUT/ocl-stream and $OUT/omp-stream from $SRC"
