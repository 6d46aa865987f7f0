#!/usr/bin/env bash
# The GPU evidence the README's H100 table needs, in one run, from a binary built elsewhere:
# build with `cargo build --release` on any machine, carry target/release/harness (and, where
# the GPU machine has no NVRTC, the CUBINs of `harness check-kernels --arch sm_90 --cubin-dir
# gpu-cubins kernels/ports/*.toml`, the ports' kernels among them) to the GPU machine, and
# run this from the repository root.
#
# usage: scripts/gpu-evidence.sh [--device cuda|opencl|host] [--budget SECONDS] [--out DIR]
#   --device  the device to measure (default cuda); CI runs the CPU half with --device opencl
#   --budget  stop starting steps when this many seconds have passed (default 540), and cut a
#             running step at the budget; the steps not run are listed as skipped
#   --out     the folder for everything (default $OUT or ./gpu-evidence)
# Environment: HARNESS_BIN (default ./target/release/harness), HARNESS_CUBIN_DIR (CUBINs for a
# machine without NVRTC; default ./gpu-cubins when that folder exists), BABELSTREAM_SRC (a
# BabelStream source tree: with nvcc at hand, BabelStream's CUDA build runs beside ours),
# GPU_BENCHES_SRC (a gpu-benches source tree: with nvcc at hand, its gpu-stream, gpu-l2-cache
# and gpu-cache run beside the calibration, for at most GPU_BENCHES_BUDGET s, default 150),
# PORTS_BUDGET (the most seconds for the kernel ports' held-out half; default 200),
# PORTS2_BUDGET, PORTS3_BUDGET and PORTS4_BUDGET (the same for the second, third and fourth
# batches' held-out halves; default 120 each), PORTS_LATER_BUDGET (for each of the fifth to
# ninth's and the eleventh to fifteenth's, after the suite; default 90).
#
# Writes DIR/summary.tsv (step, exit status, wall ms; `skipped` past the budget) and one
# DIR/<step>.txt per step; exits 2 when the device or the compiler is missing (and says which),
# else 0: a failed step is recorded in the summary, not fatal.
#
# How the H100 runs were made (results/h100-2026-11-26, …-26b), on a lent machine that takes a
# working tree of at most 64 MiB and brings back at most 8 files: plots/, results/ and reports/
# were taken out of the git index for the call (`git rm -r --cached -q plots results reports`,
# the three folders listed in .git/info/exclude; `git reset -q` afterwards), the binary and
# BabelStream's sources were carried (target/release/harness; target/bs-ref, made with
# `git archive 57637d5 src` of UoB-HPC/BabelStream and unpacked there), and the command was
#   export PATH=/usr/local/cuda/bin:$PATH; E=/tmp/ev; mkdir -p $E
#   BABELSTREAM_SRC=$PWD/target/bs-ref HARNESS_BIN=./target/release/harness \
#     scripts/gpu-evidence.sh --device cuda --budget 500 --out $E > $E/script.log 2>&1
#   tar czf $OUT/ev.tgz -C $E .
# with a time limit 70 s above the budget (the second run took 347 s of its 500; its suite
# 146 s). Since 2026-11-26 the suite's GPU plan grows vadd, triad, jacobi2d and sor-rb until
# their windows run in device memory (docs/models.md §2.5): expect the suite to take about a
# minute longer (two targets of 6.7 GB to upload), not yet measured on a GPU. Also since then
# the bandwidth sweep warms each visit of a working set for 2 ms (a few seconds more per
# calibration), and every other point (a Δt sweep's n, a chase's working set, a transfer size)
# likewise (point_warmup_seconds: about 300 points, under a second more), and
# validate-maxplus runs each size for at least 20 ms per timed run (about a second more per
# graph).
# The H200 session (results/h200-2026-11-26, HOW.md there) ran it with --budget 525 under a
# 595 s limit: calibration 58 s; the suite 443 s for its first four cases (vadd and triad at
# 2^27, jacobi2d at 31,732, then sor-reordered), cut in sor-rb, whose 2 × 10^9-point target the
# host filled and checked on one core (now on all of them, not yet timed on a GPU). The suite
# now runs straight after the calibration, before the steps earlier sessions ran.
# The second H200 session (results/h200-2026-11-26b) found sor-rb's GPU case to need minutes:
# its target's run measures 2.7 s but takes 18.6 s of wall time (33.8 s with the host's check:
# the host fills and keeps a 2 × 10^9-point grid), and the suite runs it at least five times.
# So the suite runs its other seven cases first, and sor-rb last of all, into OUT/sorrb.
set -uo pipefail
DEVICE=cuda
BUDGET=540
OUTDIR="${OUT:-gpu-evidence}"
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEVICE="$2"; shift 2 ;;
    --budget) BUDGET="$2"; shift 2 ;;
    --out) OUTDIR="$2"; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$BUDGET" in ''|*[!0-9]*) echo "error: --budget takes whole seconds, got $BUDGET" >&2; exit 2 ;; esac
case "${GPU_BENCHES_BUDGET:-150}" in ''|*[!0-9]*) echo "error: GPU_BENCHES_BUDGET takes whole seconds, got $GPU_BENCHES_BUDGET" >&2; exit 2 ;; esac
case "${PORTS_BUDGET:-200}" in ''|*[!0-9]*) echo "error: PORTS_BUDGET takes whole seconds, got $PORTS_BUDGET" >&2; exit 2 ;; esac
case "${PORTS2_BUDGET:-120}" in ''|*[!0-9]*) echo "error: PORTS2_BUDGET takes whole seconds, got $PORTS2_BUDGET" >&2; exit 2 ;; esac
BIN="${HARNESS_BIN:-./target/release/harness}"
if [ -z "${HARNESS_CUBIN_DIR:-}" ] && [ -d gpu-cubins ]; then export HARNESS_CUBIN_DIR="$PWD/gpu-cubins"; fi
START=$(date +%s)
mkdir -p "$OUTDIR"
SUMMARY="$OUTDIR/summary.tsv"
printf 'step\texit\twall_ms\n' > "$SUMMARY"

# What is missing, before any time is spent.
if [ ! -x "$BIN" ]; then
  echo "error: $BIN not found or not executable: build it with cargo build --release (or set HARNESS_BIN)" >&2
  exit 2
fi
"$BIN" devices > "$OUTDIR/devices.txt" 2>&1
"$BIN" devices --json > "$OUTDIR/devices.json" 2> "$OUTDIR/devices.err"
if ! grep -q "\"backend\": \"$DEVICE\"" "$OUTDIR/devices.json"; then
  echo "error: no $DEVICE device found; harness devices says:" >&2
  cat "$OUTDIR/devices.txt" >&2
  exit 2
fi
if [ "$DEVICE" = cuda ]; then
  command -v nvidia-smi >/dev/null && nvidia-smi > "$OUTDIR/nvidia-smi.txt" 2>&1
  if grep -q "^NVRTC [0-9]" "$OUTDIR/devices.txt"; then
    :
  elif [ -n "${HARNESS_CUBIN_DIR:-}" ] && ls "$HARNESS_CUBIN_DIR"/*.cubin >/dev/null 2>&1; then
    echo "NVRTC not found: using the CUBINs in $HARNESS_CUBIN_DIR" | tee -a "$OUTDIR/devices.txt"
  else
    echo "error: neither NVRTC nor precompiled CUBINs: install NVRTC, or run \`harness check-kernels --arch sm_90 --cubin-dir gpu-cubins\` where NVRTC is and carry gpu-cubins here" >&2
    exit 2
  fi
fi

# One step: run a command with what is left of the budget, or record it as skipped. A step
# that needs the calibration (NEEDS_CAL=1) is recorded as such when the calibration failed.
run_step() {
  local name=$1; shift
  local left=$(( BUDGET - ($(date +%s) - START) ))
  # A step may be capped below what is left (STEP_CAP seconds).
  if [ -n "${STEP_CAP:-}" ] && [ "$left" -gt "$STEP_CAP" ]; then left=$STEP_CAP; fi
  if [ "$left" -le 0 ]; then
    printf '%s\tskipped\t0\n' "$name" >> "$SUMMARY"
    return
  fi
  if [ "${NEEDS_CAL:-0}" = 1 ] && [ ! -f "$CAL" ]; then
    printf '%s\tno calibration\t0\n' "$name" >> "$SUMMARY"
    return
  fi
  local t0; t0=$(date +%s%N)
  timeout --signal=INT --kill-after=10 "$left" "$@" > "$OUTDIR/$name.txt" 2>&1
  local status=$?
  [ "$status" = 124 ] && status="budget"
  printf '%s\t%s\t%s\n' "$name" "$status" "$(( ($(date +%s%N) - t0) / 1000000 ))" >> "$SUMMARY"
}
# One step of the harness itself.
step() {
  local name=$1; shift
  run_step "$name" "$BIN" "$@"
}

# The steps in the order of what matters most, so that a tight budget cuts the rest.
# BabelStream twice: floats as the calibration runs them, and doubles on 2^27 elements on a
# GPU, the configuration of BabelStream's own run that the README's reference figures come
# from (2^25 on a CPU device, where 3 GiB of arrays would take most of the budget).
CAL="$OUTDIR/calibration.json"
BS_SIZE=2^25
[ "$DEVICE" = cuda ] && BS_SIZE=2^27
step check-kernels check-kernels --no-opencl
# BabelStream itself beside ours, on the same card: where BABELSTREAM_SRC names a BabelStream
# source tree (scripts/babelstream-build.sh pins the commit) and nvcc is at hand, its CUDA
# version is built here and run in the configuration of its own published figures (doubles,
# 2^27 elements, 100 times), so the reference is measured, not quoted.
if [ "$DEVICE" = cuda ] && [ -n "${BABELSTREAM_SRC:-}" ]; then
  if command -v nvcc >/dev/null && [ -f "$BABELSTREAM_SRC/src/main.cpp" ]; then
    run_step babelstream-reference-build scripts/babelstream-build.sh --cuda "$BABELSTREAM_SRC" "$OUTDIR/babelstream-cuda"
    if [ -x "$OUTDIR/babelstream-cuda/cuda-stream" ]; then
      run_step babelstream-reference "$OUTDIR/babelstream-cuda/cuda-stream" --arraysize 134217728
    fi
  else
    printf 'babelstream-reference\tno nvcc or no %s/src/main.cpp\t0\n' "$BABELSTREAM_SRC" >> "$SUMMARY"
  fi
fi
step babelstream babelstream --device "$DEVICE"
step babelstream-fp64 babelstream --device "$DEVICE" --double --arraysize "$BS_SIZE"
step calibrate calibrate --device "$DEVICE" -o "$CAL"
# gpu-benches beside the calibration just made, on the same card: where GPU_BENCHES_SRC names a
# gpu-benches source tree (the commit scripts/gpu-benches-compare.sh pins; carried like
# BabelStream's, e.g. `git archive 1c36d50 MeasurementSeries.hpp dtime.hpp gpu-error.h
# gpu-clock.cuh gpu-stream gpu-l2-cache gpu-cache` unpacked into target/gpu-benches-src) and
# nvcc is at hand, the script builds and runs them and writes OUT/gpu-benches/compare.csv:
# per level and access, their plateau beside this calibration's (issue 58). Before the suite,
# so a tight budget cuts the suite, not the comparison; the script stops 5 s before the budget.
if [ "$DEVICE" = cuda ] && [ -n "${GPU_BENCHES_SRC:-}" ]; then
  if command -v nvcc >/dev/null && [ -f "$GPU_BENCHES_SRC/gpu-stream/main.cu" ]; then
    GB_BUDGET=${GPU_BENCHES_BUDGET:-150}
    GB_LEFT=$(( BUDGET - ($(date +%s) - START) - 5 ))
    [ "$GB_LEFT" -lt "$GB_BUDGET" ] && GB_BUDGET=$GB_LEFT
    [ "$GB_BUDGET" -lt 1 ] && GB_BUDGET=1
    NEEDS_CAL=1 run_step gpu-benches scripts/gpu-benches-compare.sh --calibration "$CAL" \
      --harness "$BIN" --budget "$GB_BUDGET" --out "$OUTDIR/gpu-benches"
  else
    printf 'gpu-benches\tno nvcc or no %s/gpu-stream/main.cu\t0\n' "$GPU_BENCHES_SRC" >> "$SUMMARY"
  fi
fi
# The kernel ports' held-out half (kernels/ports/SPLIT.md, issue 59) with the calibration just
# made, for at most PORTS_BUDGET s (default 200): third-party kernels the model was not
# developed on, which no GPU has run yet, so before the built-in suite, whose GPU series are
# stored (reference/). Every port is checked at its smallest size only: the reference kernels
# are sequential, one GPU thread, and would take minutes at the targets. Each case is written
# as soon as it is measured (OUT/ports/runs/), so a cut keeps the cases before it. To keep
# them: copy OUT/ports/held-out/cases/*.json (or OUT/ports/runs/*/*.suite/*.json) to
# harness/tests/fixtures/ports/<device>/held-out/ and the calibration to
# harness/tests/fixtures/ports/<device>.json, and add the device to tests/accuracy.rs.
# With three cold runs per size (on a GPU a kernel empties the L2 before each sweep;
# docs/measurement.md, step 6), which a GPU series makes only when asked: the stored series
# then give the `calibrated` variant both with and without them (strip the `cold` fields).
STEP_CAP=${PORTS_BUDGET:-200} NEEDS_CAL=1 run_step ports-held-out scripts/ports-baseline.sh \
  --device "$DEVICE" --half held-out --calibration "$CAL" --verify smallest --cold-runs 3 \
  --out "$OUTDIR/ports" "$BIN"
# The second batch's held-out half likewise (its own cap, PORTS2_BUDGET, default 120 s).
STEP_CAP=${PORTS2_BUDGET:-120} NEEDS_CAL=1 run_step ports-held-out-2 scripts/ports-baseline.sh \
  --device "$DEVICE" --half held-out-2 --calibration "$CAL" --verify smallest --cold-runs 3 \
  --out "$OUTDIR/ports" "$BIN"
# And the third's (PORTS3_BUDGET, default 120 s), and the fourth's (PORTS4_BUDGET).
STEP_CAP=${PORTS3_BUDGET:-120} NEEDS_CAL=1 run_step ports-held-out-3 scripts/ports-baseline.sh \
  --device "$DEVICE" --half held-out-3 --calibration "$CAL" --verify smallest --cold-runs 3 \
  --out "$OUTDIR/ports" "$BIN"
STEP_CAP=${PORTS4_BUDGET:-120} NEEDS_CAL=1 run_step ports-held-out-4 scripts/ports-baseline.sh \
  --device "$DEVICE" --half held-out-4 --calibration "$CAL" --verify smallest --cold-runs 3 \
  --out "$OUTDIR/ports" "$BIN"
# The suite straight after the calibration it needs (and gpu-benches' comparison, where asked
# for, and the held-out ports): it is what issue 11 asks of a GPU, and the longest step, so a
# budget cut falls on the steps after it, which earlier sessions ran.
NEEDS_CAL=1 step validate-suite validate-suite --device "$DEVICE" --calibration "$CAL" --output-dir "$OUTDIR" \
  --workloads vadd,triad,jacobi2d,sor,adi,lu-ssor,line-solve
for g in "vadd_z2 2^16,2^20,2^24,2^26" "triad 2^16,2^20,2^24,2^26" "jacobi5 512,1024,2048,4096"; do
  set -- $g
  NEEDS_CAL=1 step "maxplus-$1" validate-maxplus "kernels/graphs/$1.toml" --sizes "$2" \
    --device "$DEVICE" --calibration "$CAL" --plot-dir "$OUTDIR/plots"
done
# 16 grids of 1024² (the first H100 run's 64 of 2048² took 143 s, most of it on one core).
step balance-sor balance --workload sor --size 1024 --grids 16 --device "$DEVICE" --run --plot "$OUTDIR/plots" --output-dir "$OUTDIR"
step dvmh-adi run adi --size 400 --iters 100 --device "$DEVICE" --no-verify
step calibrate-quick calibrate --device "$DEVICE" --quick -o "$OUTDIR/calibration-quick.json"
step dvmh-sor run sor --size 16000 --iters 100 --device "$DEVICE" --no-verify
NEEDS_CAL=1 step validate-suite-sorrb validate-suite --device "$DEVICE" --calibration "$CAL" \
  --output-dir "$OUTDIR/sorrb" --workloads sor-rb
# The later batches' held-out halves (the fifth's, sixth's and ninth's, the seventh's and
# eighth's sparse products and graph steps, which declare their gathers, and the eleventh's
# GEMV, which declares its walks), each for at most PORTS_LATER_BUDGET s (default 90), after
# the suite: no GPU has run them yet.
for h in held-out-5 held-out-6 held-out-7 held-out-8 held-out-9 held-out-11; do
  STEP_CAP=${PORTS_LATER_BUDGET:-90} NEEDS_CAL=1 run_step "ports-$h" scripts/ports-baseline.sh \
    --device "$DEVICE" --half "$h" --calibration "$CAL" --verify smallest --cold-runs 3 \
    --out "$OUTDIR/ports" "$BIN"
done
# The twelfth batch's one case (SPLIT.md): the GEMV at N = 4096, a stride of whole pages, from
# the odd window frozen with it, checked at its smallest size only.
STEP_CAP=${PORTS_LATER_BUDGET:-90} NEEDS_CAL=1 step ports-held-out-12 validate \
  kernels/ports/gemv-n.toml --device "$DEVICE" --small 1001,1201,1401,1601,2001 --large 4096 \
  --repeat 3 --verify smallest --calibration "$CAL" --output-dir "$OUTDIR/ports/held-out-12"
# The thirteenth to fifteenth batches' held-out halves (SPLIT.md): the two grid-stride
# kernels, HeCBench's row kernels (softmax, layernorm) and its memory-bound adam and
# dense-embedding, GPU kernels first of all, which only PoCL has run.
for h in held-out-13 held-out-14 held-out-15; do
  STEP_CAP=${PORTS_LATER_BUDGET:-90} NEEDS_CAL=1 run_step "ports-$h" scripts/ports-baseline.sh \
    --device "$DEVICE" --half "$h" --calibration "$CAL" --verify smallest --cold-runs 3 \
    --out "$OUTDIR/ports" "$BIN"
done
# The ports' development half last, where the budget still allows it.
NEEDS_CAL=1 run_step ports-development scripts/ports-baseline.sh \
  --device "$DEVICE" --half development --calibration "$CAL" --verify smallest --cold-runs 3 \
  --out "$OUTDIR/ports" "$BIN"
NEEDS_CAL=1 run_step ports-development-2 scripts/ports-baseline.sh \
  --device "$DEVICE" --half development-2 --calibration "$CAL" --verify smallest --cold-runs 3 \
  --out "$OUTDIR/ports" "$BIN"
NEEDS_CAL=1 run_step ports-development-3 scripts/ports-baseline.sh \
  --device "$DEVICE" --half development-3 --calibration "$CAL" --verify smallest --cold-runs 3 \
  --out "$OUTDIR/ports" "$BIN"
NEEDS_CAL=1 run_step ports-development-4 scripts/ports-baseline.sh \
  --device "$DEVICE" --half development-4 --calibration "$CAL" --verify smallest --cold-runs 3 \
  --out "$OUTDIR/ports" "$BIN"
echo "total wall $(( $(date +%s) - START )) s of a $BUDGET s budget" >> "$OUTDIR/devices.txt"
column -t -s "$(printf '\t')" "$SUMMARY" 2>/dev/null || cat "$SUMMARY"
exit 0
