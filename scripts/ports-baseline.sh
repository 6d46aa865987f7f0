#!/usr/bin/env bash
# The prediction's accuracy on the kernel ports (kernels/ports/), each half of SPLIT.md in a
# suite of its own: every port predicted just past the device's largest cache from five
# small sizes, by every variant, on one device. Run it on an idle machine: it times.
#
# usage: scripts/ports-baseline.sh [--device SEL] [--out DIR] [--iters N] [--half NAME]
#                                  [--calibration FILE] [--verify WHICH] [--cold-runs N]
#                                  [--dry-run] [HARNESS]
#   --device       the device (default opencl)
#   --out          the folder for everything (default results/ports-<date>, which git ignores)
#   --iters        iterations per run, at least (default 1: validate-suite raises it for a case
#                  whose smallest size would run under 20 ms, so only the slow kernels keep 1)
#   --half         only this half of kernels/ports/SPLIT.md: development or held-out (the first
#                  batch's), development-K or held-out-K (batch K = 2 to 10, 16 or 17),
#                  held-out-11, -13, -14 or -15 (held-out-12 is one kernel at fixed sizes:
#                  SPLIT.md);
#                  default all but the reserves, each batch's development half first
#                  (held-out-10, kept in reserve until 2026-12-02, is measured now as the
#                  others); the reserves held-out-16 and held-out-17 run only when named
#   --calibration  the device's calibration (default calibrations/<device>.json)
#   --verify       which runs are checked (validate-suite's --verify: all, smallest or none;
#                  default all, and smallest for sgemm off CUDA). A GPU's sequential reference
#                  kernels run on one GPU thread, far too slowly at the targets: take smallest
#   --cold-runs    cold runs per size (validate-suite's --cold-runs; default its own: 3 on a
#                  CPU device, none on a GPU)
#   --dry-run      print each half's plan (targets and small sizes) and stop
#   HARNESS        the binary (default: target/release/harness, else target/debug/harness)
# The device needs a calibration; without one, run `harness calibrate --device SEL` first.
# mri-q runs with K = 32 k-space samples instead of its 1,024 wherever its sequential
# reference checks it (on CUDA too, unless --verify none): with 1,024, PoCL's sin and cos
# take about two minutes per run at the window's largest size and eight at the target's, and
# on a GPU the reference, one thread, would take minutes at the smallest size a GPU's window
# starts from (8.6 G steps at N = 2^23); with 32 the kernel stays compute-bound, 64 sin/cos
# per voxel over 20 bytes, and every device runs the same configuration. sgemm off CUDA runs with
# `--verify smallest --repeat 3`: at its target (N = 2372 on a 32 MiB L3) one run takes about
# three minutes on PoCL and its sequential reference longer, so only the smallest size is
# checked and the target runs three times instead of five. lavamd likewise: at its target
# (N = 28 boxes a side) one iteration takes 21 s on PoCL, its sequential reference minutes.
# The third batch: lud and cfd check the smallest size only everywhere (lud's O(N³) reference
# takes minutes at its target, cfd's about 20 s on PoCL; the ninth batch's bc-backtrack
# likewise, its reference 77 s at 100 MB); ep runs batches of B = 16 pairs per
# work item off CUDA instead of 256, since its data are 48 bytes a work item and a target past
# a 32 MiB L3 (1.4 M work items) would take 12 s an iteration with 256 (0.7 s with 16, still
# 16 pairs' arithmetic per 48 bytes written).
# The fourth batch: cutcp checks the smallest size only and runs the target three times (one
# iteration at its target, N = 244 on a 32 MiB L3, takes about 40 s on PoCL: R³ = 31³
# regions of 8³ lattice points, each walking 335 bins; its sequential reference far longer).
# tpacf is not run: its work grows as N² pairs over 12·N bytes, so a target past the last
# cache (N = 5.4 M points past 64 MiB) would take hours on a CPU; it stays in SPLIT.md's
# held-out half, reported as not measured (SPLIT.md).
# Writes OUT/runs/ (each validate-suite run as it ran) and one OUT/HALF/ per half (development,
# held-out, …), each the half's cases (OUT/HALF/cases/) assessed together into one
# <device>.suite.json, .csv and .md, and prints each half's table. Re-assess later without
# the device:
#   harness validate-suite --from OUT/held-out/cases --calibration FILE --output-dir D
set -euo pipefail
cd "$(dirname "$0")/.."
device=opencl
out=results/ports-$(date +%Y-%m-%d)
iters=1
halves="development held-out development-2 held-out-2 development-3 held-out-3 development-4 held-out-4 development-5 held-out-5 development-6 held-out-6 development-7 held-out-7 development-8 held-out-8 development-9 held-out-9 development-10 held-out-10 held-out-11 held-out-13 held-out-14 held-out-15 development-16 development-17"
calibration=
verify=
dry=()
cold=()
harness=
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=${2:?--device needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --iters) iters=${2:?--iters needs a count}; shift 2 ;;
    --half)
      case "${2:-}" in
        development|held-out|development-[2-9]|held-out-[2-9]|development-1[067]|held-out-1[0134567]) halves=$2; shift 2 ;;
        *) echo "error: --half takes development, held-out or either with -2 to -10, -16 or -17, or held-out-11, -13, -14 or -15, got '${2:-}'" >&2; exit 2 ;;
      esac ;;
    --calibration) calibration=${2:?--calibration needs a file}; shift 2 ;;
    --verify)
      case "${2:-}" in
        all|smallest|none) verify=$2; shift 2 ;;
        *) echo "error: --verify takes all, smallest or none, got '${2:-}'" >&2; exit 2 ;;
      esac ;;
    --cold-runs)
      case "${2:-}" in
        ''|*[!0-9]*) echo "error: --cold-runs takes a count, got '${2:-}'" >&2; exit 2 ;;
        *) cold=(--cold-runs "$2"); shift 2 ;;
      esac ;;
    --dry-run) dry=(--dry-run); shift ;;
    -h|--help) sed -n '2,54p' "$0"; exit 0 ;;
    -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) harness=$1; shift ;;
  esac
done
if [ -n "$calibration" ] && [ ! -f "$calibration" ]; then
  echo "error: no calibration file $calibration" >&2; exit 2
fi
. scripts/harness-bin.sh
harness=$(harness_bin "$harness") || exit 2
# The halves as SPLIT.md lists them: "- **Development (8):** `a`, `b`, …", the second batch's
# "- **Development 2 (4):** …". An item may wrap: it runs to the next item or blank line.
half() {
  awk -v h="- **$1 (" 'index($0, h) == 1 { on = 1; print; next }
    on && (/^- / || /^$/) { exit } on { print }' kernels/ports/SPLIT.md \
    | grep -o '`[a-z0-9-]*`' | tr -d '`'
}
# A kernel's own options, where it has some (see the header); --verify where asked for and
# the kernel's own do not say.
own_options() {
  local own=
  case "$1:$device:$verify" in
    mri-q:cuda*:none) ;;
    mri-q:*) own="--param K=32" ;;
    sgemm:cuda*|lavamd:cuda*) ;;
    sgemm:*|lavamd:*) own="--verify smallest --repeat 3" ;;
    lud:*|cfd:*|bc-backtrack:*) own="--verify smallest" ;;
    ep:cuda*) ;;
    ep:*) own="--param B=16" ;;
    cutcp:*) own="--verify smallest --repeat 3" ;;
  esac
  case "$own" in
    *--verify*) ;;
    *) [ -z "$verify" ] || own="$own --verify $verify" ;;
  esac
  echo "$own"
}
given=("${cold[@]}")
[ -z "$calibration" ] || given+=(--calibration "$calibration")
for name in $halves; do
  case $name in
    development) kernels=$(half "Development") ;;
    held-out) kernels=$(half "Held-out") ;;
    development-*) kernels=$(half "Development ${name#development-}") ;;
    held-out-*) kernels=$(half "Held-out ${name#held-out-}") ;;
  esac
  [ -n "$kernels" ] || { echo "error: no $name half in kernels/ports/SPLIT.md" >&2; exit 1; }
  echo "== $name: $(echo $kernels)"
  plain=()
  # What a kernel without options of its own runs with: those run together.
  plain_options=$(own_options none)
  for k in $kernels; do
    if [ "$k" = tpacf ]; then
      echo "tpacf: not run (a target past the last cache is N² pairs out of reach; see --help)"
      continue
    fi
    opts=$(own_options "$k")
    if [ "$opts" = "$plain_options" ]; then plain+=("kernels/ports/$k.toml"); continue; fi
    # shellcheck disable=SC2086 # the options are words
    "$harness" validate-suite --device "$device" --iters "$iters" "${given[@]}" $opts \
      --workloads "kernels/ports/$k.toml" --output-dir "$out/runs/$name-$k" "${dry[@]}"
  done
  if [ ${#plain[@]} -gt 0 ]; then
    # shellcheck disable=SC2086 # the options are words
    "$harness" validate-suite --device "$device" --iters "$iters" "${given[@]}" $plain_options \
      --workloads "$(IFS=,; echo "${plain[*]}")" --output-dir "$out/runs/$name" "${dry[@]}"
  fi
  [ ${#dry[@]} -eq 0 ] || continue
  mkdir -p "$out/$name/cases"
  # This half's runs only: "$name-*" would also match development-2's and -3's.
  for run in "$out/runs/$name" $(for k in $kernels; do echo "$out/runs/$name-$k"; done); do
    [ -d "$run" ] || continue
    cp "$run"/*.suite/*.validate.*.json "$out/$name/cases/"
  done
  cal=${calibration:-calibrations/$(ls "$out/$name/cases" | head -1 | sed 's/\.validate\..*//').json}
  "$harness" validate-suite --from "$out/$name/cases" --calibration "$cal" \
    --output-dir "$out/$name"
done
