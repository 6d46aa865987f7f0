#!/usr/bin/env bash
# Assess the reference set (reference/) again with the current code, no device needed: each
# device's stored validation cases keep their measurements, and the predictions are made anew
# from the device's stored calibration. Prints one table row per device (the `calibrated`
# variant's median and max |error|, cases predicted, how often its interval held) — the
# README's accuracy table is this table.
#
# usage: scripts/reassess-reference.sh [--update] [HARNESS]
#   --update  also write each device's new <device>.suite.json into reference/ (for a commit
#             that changes the model); without it the outputs go to results/reference/, which
#             git ignores
#   HARNESS   the binary (default: target/release/harness, else target/debug/harness)
set -euo pipefail
cd "$(dirname "$0")/.."
update=0
if [ "${1:-}" = --update ]; then update=1; shift; fi
harness=${1:-}
. scripts/harness-bin.sh
harness=$(harness_bin "$harness") || exit 2
out=results/reference
mkdir -p "$out"
printf '| device | calibrated median | max | cases predicted | interval held | paper median | Extra-P median |\n'
printf '| --- | --- | --- | --- | --- | --- | --- |\n'
for suite in reference/*.suite/; do
  dev=$(basename "$suite" .suite)
  [ -f "reference/$dev.json" ] || { echo "error: reference/$dev.json missing" >&2; exit 1; }
  "$harness" validate-suite --from "$suite" --calibration "reference/$dev.json" \
    --output-dir "$out" > "$out/reassess-$dev.log" 2>&1 \
    || { echo "error: $dev failed: see $out/reassess-$dev.log" >&2; exit 1; }
  python3 - "$out/$dev.suite.json" "reference/extrap-suite-$dev.csv" <<'PY'
import csv, json, os, statistics, sys
d = json.load(open(sys.argv[1]))
by = {v["variant"]: v for v in d["summary"]}
c, p = by["calibrated"], by.get("paper")
extrap = "–"
if os.path.exists(sys.argv[2]):
    errs = [abs(float(r["extrap_err_pct"])) for r in csv.DictReader(open(sys.argv[2]))
            if r.get("extrap_err_pct") not in (None, "", "nan")]
    if errs:
        extrap = f"{statistics.median(errs):.1f} %"
dev = d.get("device") if isinstance(d.get("device"), dict) else {"name": str(d.get("device"))}
name = f"{dev['name']} ({dev.get('backend', '?')})"
n = len(d["cases"])
print(f"| {name} | {c['error']['median']:.1f} % | {c['error']['max']:.1f} % | "
      f"{c['predicted']} of {n} | {100 * c['interval_holds']:.0f} % | "
      f"{p['error']['median']:.1f} % | {extrap} |" if p else "")
PY
  if [ "$update" = 1 ]; then cp "$out/$dev.suite.json" "reference/$dev.suite.json"; fi
done
