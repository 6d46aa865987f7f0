#!/usr/bin/env bash
# How far a machine's own noise alone keeps the stored validation-suite runs from the
# targets (median |error| <= 10 %, max <= 30 %), whatever the model. No device needed.
#
# Per device and case (with its target size), over the stored runs FIRST..LAST of
# scripts/suite-runs.txt: how much the target's own time per iteration moved from run to run
# (its median over the runs, the median and largest |deviation| of a run from it). Then an
# oracle that knew each case's time per iteration as that median over all the runs, the best
# any one prediction per case can do without knowing the run's moment: its median and max
# |error| per run, beside the `calibrated` variant's as the runs stored it. A case whose
# target size or implementation changed between runs is a different case only by its size,
# so keep FIRST at a run from which they stay the same (23: the pinned runs).
#
# usage: scripts/noise-floor.sh [FIRST [LAST]]
set -euo pipefail
cd "$(dirname "$0")/.."
first=${1:-23}
last=${2:-1000000}
case "$first$last" in *[!0-9]*) echo "error: FIRST and LAST are run numbers" >&2; exit 2 ;; esac
python3 - "$first" "$last" <<'PY'
import json, os, statistics as st, sys

first, last = int(sys.argv[1]), int(sys.argv[2])
runs = []
for line in open("scripts/suite-runs.txt"):
    if line.strip() and not line.startswith("#"):
        number, folder = line.split()[:2]
        if first <= int(number) <= last:
            runs.append((int(number), folder))
devices = ["host-amd-epyc", "opencl-pthread-skylake-avx512-amd-epyc"]
for device in devices:
    per_case, by_run, calibrated = {}, {}, {}
    for number, folder in runs:
        path = os.path.join(folder, device + ".suite.json")
        if not os.path.exists(path):
            continue
        suite = json.load(open(path))
        for c in suite["cases"]:
            key = (c["case"], c["size"])
            per_iteration = c["measured_seconds"] / c["iterations"]
            per_case.setdefault(key, []).append(per_iteration)
            by_run.setdefault(number, []).append((key, per_iteration))
        s = [v for v in suite["summary"] if v["variant"] == "calibrated"]
        if s:
            calibrated[number] = (s[0]["error"]["median"], s[0]["error"]["max"])
    if not by_run:
        continue
    print(f"{device}: runs {min(by_run)}-{max(by_run)} ({len(by_run)} runs)")
    print(f"  {'case':<22} {'N':>9} {'runs':>4}  {'s per iteration':>15}  "
          f"{'|run - median|: median':>22}  {'max':>6}")
    medians = {}
    for key, values in sorted(per_case.items()):
        m = st.median(values)
        medians[key] = m
        dev = [abs(v / m - 1) * 100 for v in values]
        print(f"  {key[0]:<22} {key[1]:>9} {len(values):>4}  {m:>15.4g}  "
              f"{st.median(dev):>21.1f} %  {max(dev):>4.0f} %")
    met = {"oracle": [0, 0], "calibrated": [0, 0]}
    print(f"  {'run':>5}  {'oracle median / max':>20}  {'calibrated median / max':>24}")
    for number, cases in sorted(by_run.items()):
        errors = [abs(medians[k] / v - 1) * 100 for k, v in cases]
        o = (st.median(errors), max(errors))
        c = calibrated.get(number)
        for name, pair in (("oracle", o), ("calibrated", c)):
            if pair:
                met[name][0] += pair[0] <= 10
                met[name][1] += pair[1] <= 30
        shown = f"{c[0]:.1f} / {c[1]:.1f} %" if c else "-"
        print(f"  {number:>5}  {o[0]:>10.1f} / {o[1]:>5.1f} %  {shown:>24}")
    n = len(by_run)
    for name, (median_ok, max_ok) in met.items():
        print(f"  {name}: median <= 10 % in {median_ok} of {n} runs, max <= 30 % in {max_ok}")
PY
