#!/usr/bin/env bash
# The prediction's accuracy on the kernel ports (kernels/ports/), each half of SPLIT.md in a
# suite of its own: every port predicted just past the device's largest cache from five
# small sizes, by every variant, on one device. Run it on an idle machine: it times.
#
# usage: scripts/ports-baseline.sh [--device SEL] [--out DIR] [--dry-run] [HARNESS]
#   --device   the device (default opencl)
#   --out      the folder for everything (default results/ports-<date>, which git ignores)
#   --dry-run  print each half's plan (targets and small sizes) and stop
#   HARNESS    the binary (default: target/release/harness, else target/debug/harness)
# The device needs a calibration (calibrations/<device>.json); without one, run
# `harness calibrate --device SEL` first. Writes OUT/development/ and OUT/held-out/, each a
# validate-suite output (<device>.suite.json, .csv, .md and the cases), and prints each
# half's table. Re-assess later without the device:
#   harness validate-suite --from OUT/held-out/<device>.suite --calibration FILE --output-dir D
set -euo pipefail
cd "$(dirname "$0")/.."
device=opencl
out=results/ports-$(date +%Y-%m-%d)
dry=()
harness=
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=${2:?--device needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --dry-run) dry=(--dry-run); shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) harness=$1; shift ;;
  esac
done
. scripts/harness-bin.sh
harness=$(harness_bin "$harness") || exit 2
# The halves as SPLIT.md lists them: "- **Development (8):** `a`, `b`, …".
# An item may wrap: it runs to the next item or blank line.
half() {
  awk -v h="- **$1" 'index($0, h) == 1 { on = 1; print; next }
    on && (/^- / || /^$/) { exit } on { print }' kernels/ports/SPLIT.md \
    | grep -o '`[a-z0-9-]*`' | tr -d '`' | sed 's|^|kernels/ports/|; s|$|.toml|' | paste -sd, -
}
for name in development held-out; do
  case $name in
    development) specs=$(half "Development") ;;
    held-out) specs=$(half "Held-out") ;;
  esac
  [ -n "$specs" ] || { echo "error: no $name half in kernels/ports/SPLIT.md" >&2; exit 1; }
  echo "== $name: $specs"
  "$harness" validate-suite --device "$device" --workloads "$specs" \
    --output-dir "$out/$name" "${dry[@]}"
done
