#!/usr/bin/env bash
# The run-length check of max-plus run 6 (2 vCPUs of an AMD EPYC): the host graphs against
# this folder's host calibration, alternating between runs of at least 20 ms per size
# (--min-run-ms 20, the default from 2026-11-26) and 10 iterations at every size
# (--min-run-ms 0, as runs 1-5 had), four rounds, so both protocols meet the machine's same
# moments. Each round's files go to protocol/<round>-<ms>/ (a copy of the calibration there);
# the figures to a temporary folder (`harness figures` draws them under plots/ from the files;
# the run of 2026-11-26 drew them into each round's folder, as its logs say, and they were removed).
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/maxplus-2026-11-26b
H=./target/release/harness
C=$D/calibrations/host-amd-epyc.json
figures=$(mktemp -d)
trap 'rm -rf "$figures"' EXIT
for round in 1 2 3 4; do
  for ms in 20 0; do
    out=$D/protocol/$round-$ms
    mkdir -p "$out"
    cp "$C" "$out/host-amd-epyc.json"
    for g in triad vadd_z2; do
      $H validate-maxplus kernels/graphs/$g.toml --device host --calibration "$out/host-amd-epyc.json" \
        --sizes 2^16,2^18,2^20,2^22,2^24 --min-run-ms $ms --output-dir "$out" --plot-dir "$figures" \
        > "$out/maxplus-host-$g.log" 2>&1
    done
  done
done
