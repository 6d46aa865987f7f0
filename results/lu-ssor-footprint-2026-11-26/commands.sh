#!/usr/bin/env bash
# lu-ssor's time per point update against N on the host, its plane twin walking tiles of 4 rows (workloads/grid3d.rs, 2026-11-26; the 2026-11-25 folder has the row-by-row walk and PoCL) (2 vCPUs of an AMD EPYC,
# PoCL 3.1): where the cost per point jumps, and whether the whole grid's working set or one
# hyperplane's footprint sets it. Three rounds over the sizes (a, b, c, a, b, c …), the
# median per size; every run verified against the host reference up to N = 136.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/lu-ssor-footprint-2026-11-26
H=./target/release/harness
SIZES="34 48 68 96 120 136 160 192 232 272"
out=$D/runs.jsonl
: > $out
for round in 1 2 3; do
  for dev in host; do
    for n in $SIZES; do
      # About 16 M point updates per run, at least two iterations.
      iters=$(( 16000000 / (2 * (n - 2) ** 3) + 2 ))
      verify=""
      if [ "$n" -gt 136 ]; then verify="--no-verify"; fi
      $H run lu-ssor --device $dev --size $n --iters $iters $verify --json 2>/dev/null \
        | python3 -c "import json,sys; d=json.load(sys.stdin); d['device']='$dev'; d['round']=$round; print(json.dumps(d))" >> $out
    done
  done
done
python3 - "$out" > $D/per-point.csv <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
print("device,N,iterations,updates_per_run,kernel_ns_per_update_median,min,max,hyperplane_footprint_bytes,grid_bytes,verified")
for dev in ["host", "opencl"]:
    for n in sorted({r["size"] for r in runs}):
        rs = [r for r in runs if r["device"] == dev and r["size"] == n]
        if not rs:
            continue
        updates = 2 * (n - 2) ** 3 * rs[0]["iterations"]
        per = [r["kernel_seconds"] / updates * 1e9 for r in rs]
        # One hyperplane touches about one 64-byte line per point; the middle plane holds
        # about 3/4 (n − 2)² points.
        footprint = int(0.75 * (n - 2) ** 2 * 64)
        verified = all((r.get("verification") or {}).get("passed", False) for r in rs)
        print(f"{dev},{n},{rs[0]['iterations']},{updates},{statistics.median(per):.3f},{min(per):.3f},{max(per):.3f},{footprint},{4 * n ** 3},{'yes' if verified else 'no (not checked)'}")
PY
cat $D/per-point.csv
