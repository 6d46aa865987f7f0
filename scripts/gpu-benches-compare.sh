#!/usr/bin/env bash
# gpu-benches (https://github.com/te42kyfo/gpu-benches) beside `harness calibrate` on one CUDA
# GPU: builds its gpu-stream, gpu-l2-cache and gpu-cache with nvcc, runs each under a time
# limit, takes our per-level bandwidth from a calibration (made here, or given), and writes
# per memory level and access each tool's plateau and the ratio harness / gpu-benches.
#
# usage: scripts/gpu-benches-compare.sh [--budget S] [--per-program S] [--out DIR]
#          [--calibration FILE] [--harness BIN] [--l2-bytes N] [--parse-only DIR]
#   --budget       seconds for everything (default 300): each build and program runs under
#                  `timeout` with what is left, a program at most --per-program (default 120)
#   --out          the folder for everything (default $OUT/gpu-benches where $OUT is set, else
#                  target/gpu-benches-compare)
#   --calibration  use this calibration (harness calibrate's JSON) instead of running
#                  `harness calibrate --device cuda --json` first (about a minute on an H200)
#   --harness      the harness binary (default $HARNESS_BIN, else target/release/harness,
#                  else target/debug/harness); not needed with --calibration
#   --l2-bytes     the L2's size, for the plateaus' windows (default: the calibration's
#                  device.l2_bytes, else 50 MiB)
#   --parse-only   build and run nothing: read DIR/gpu-{stream,l2-cache,cache}.txt (a
#                  folder an earlier run wrote) and the calibration, and write the table
# Environment: GPU_BENCHES_SRC, a gpu-benches source tree (or a bare clone holding the
# pinned commit below); nvcc on PATH (/usr/local/cuda/bin is tried); GPU_BENCHES_ARCH for
# nvcc's -arch (default native).
#
# Writes DIR/compare.csv (level, access, each tool's GB/s, ratio), DIR/curves.tsv (every
# gpu-benches point), DIR/<program>.txt (its output), DIR/summary.tsv (step, exit, wall ms;
# `skipped` past the budget) and prints the table. Exits 2 with one error line when nvcc,
# the source tree or the binary is missing; a program that fails or is cut is recorded in
# the summary and its rows printed so far are still read.
#
# How the programs are built: as their Makefiles build them (nvcc -O3), except -arch=native
# for the Makefiles' sm_70 (CUDA 13 dropped Volta), C++17 throughout, and without CUPTI:
# gpu-cache and gpu-l2-cache include gpu-metrics/gpu-metrics.hpp (CUPTI's profiler and
# nvperf) only for counters whose calls are commented out at the pinned commit, and whose
# initMeasureMetric() is empty there, so the sources are staged in DIR/build with a stub of
# that one header. Nothing of gpu-benches is kept in this repository.
#
# What each program prints (the pinned commit's iostream formats; rows are read by pattern,
# so a partial output is read as far as it goes):
#   gpu-stream    header `blockSize threads %occ | init read scale triad 3pt 5pt`, then per
#                 block size 32..1024 (2 blocks per SM, so occupancy 3..100 %):
#                 `%9d   %9d  %5.1f %  |  GB/s: ` + per kernel `%6s%5.0f` (" ", GB/s), where a
#                 kernel's rate is streams × 2^27+2 doubles × 8 B over the median of 9 times
#                 (each the mean of two back-to-back launches, host clock)
#   gpu-l2-cache  `%10.0f kB%10.0f kB%10.0fms%10.1f%%%10.1f GB/s   ` + four unused counter
#                 columns: bytes one block reads (512 kB), the data set (kB), the fastest of
#                 11 launches (ms), spread (%), bandwidth = block bytes × 200000 blocks / fastest
#   gpu-cache     a `clock: …` line, a header, then `%10.0f kB%10.0fms%10.1f%%%10.1f GB/s` +
#                 four unused counter columns: the buffer (kB), the trimmed mean of 15
#                 launches (ms), spread (%), bandwidth = buffer × SMs × repetitions / fastest
#
# The plateaus: gpu-cache's L1 is the median over buffers of 8-64 KiB (inside the L1 of
# every GPU CUDA 13 builds for, Turing on) and its L2 (every SM reading one buffer) over 2 MiB to L2/2;
# gpu-l2-cache's L2 over 2 MiB to L2/2 and its device memory from 4 × L2 up; gpu-stream's
# per kernel is the best block size (its full-occupancy row is in the note). Ours: the
# calibration's bandwidth.levels (the level whose working sets hold the window's middle) and,
# beside it, the median of our sweep's own points inside the same window.
set -uo pipefail
GB_COMMIT=1c36d509ee717dca9215c27135fa1e611bb03ed1  # gpu-benches, 2024-06-21: formats above
BUDGET=300
PER_PROGRAM=120
OUTDIR="${OUT:+$OUT/gpu-benches}"
OUTDIR="${OUTDIR:-target/gpu-benches-compare}"
CALIBRATION=""
GIVEN_BIN="${HARNESS_BIN:-}"
L2_BYTES=""
PARSE_ONLY=""
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
while [ $# -gt 0 ]; do
  case "$1" in
    --budget|--out|--calibration|--harness|--l2-bytes|--parse-only|--per-program)
      [ $# -ge 2 ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }
      case "$1" in
        --budget) BUDGET="$2" ;;
        --out) OUTDIR="$2" ;;
        --calibration) CALIBRATION="$2" ;;
        --harness) GIVEN_BIN="$2" ;;
        --l2-bytes) L2_BYTES="$2" ;;
        --parse-only) PARSE_ONLY="$2" ;;
        --per-program) PER_PROGRAM="$2" ;;
      esac
      shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in "--budget=$BUDGET" "--per-program=$PER_PROGRAM" ${L2_BYTES:+"--l2-bytes=$L2_BYTES"}; do
  case "${v#*=}" in ''|*[!0-9]*) echo "error: ${v%%=*} takes a whole number, got ${v#*=}" >&2; exit 2 ;; esac
done
[ -z "$CALIBRATION" ] || [ -f "$CALIBRATION" ] || { echo "error: no calibration file $CALIBRATION" >&2; exit 2; }
command -v python3 >/dev/null || { echo "error: python3 not found (it reads the outputs)" >&2; exit 2; }

if [ -n "$PARSE_ONLY" ]; then
  [ -d "$PARSE_ONLY" ] || { echo "error: --parse-only: no folder $PARSE_ONLY" >&2; exit 2; }
  OUTDIR="$PARSE_ONLY"
  [ -n "$CALIBRATION" ] || [ ! -f "$OUTDIR/calibration.json" ] || CALIBRATION="$OUTDIR/calibration.json"
else
  # What is missing, before any time is spent: the sources, the binary, the compiler.
  SRC="${GPU_BENCHES_SRC:-}"
  [ -n "$SRC" ] || { echo "error: GPU_BENCHES_SRC is not set: point it at a gpu-benches source tree (commit ${GB_COMMIT:0:7})" >&2; exit 2; }
  FILES="gpu-stream/main.cu gpu-l2-cache/main.cu gpu-cache/main.cu MeasurementSeries.hpp dtime.hpp gpu-error.h gpu-clock.cuh"
  MIRROR=""
  if [ ! -f "$SRC/gpu-stream/main.cu" ] && command -v git >/dev/null \
      && git --git-dir="$SRC" rev-parse --verify -q "$GB_COMMIT^{commit}" >/dev/null 2>&1; then
    MIRROR="$SRC"  # a bare clone holding the pinned commit: exported below
  else
    for f in $FILES; do
      [ -f "$SRC/$f" ] || { echo "error: $SRC is not a gpu-benches source tree (no $f)" >&2; exit 2; }
    done
  fi
  if [ -z "$CALIBRATION" ]; then
    if [ -n "$GIVEN_BIN" ]; then
      [ -x "$GIVEN_BIN" ] || { echo "error: $GIVEN_BIN not found or not executable (the harness binary)" >&2; exit 2; }
      BIN="$GIVEN_BIN"
    else
      . "$ROOT/scripts/harness-bin.sh"
      BIN="$(cd "$ROOT" && harness_bin)" || exit 2
      BIN="$ROOT/$BIN"
    fi
  fi
  command -v nvcc >/dev/null || [ ! -x /usr/local/cuda/bin/nvcc ] || PATH="/usr/local/cuda/bin:$PATH"
  command -v nvcc >/dev/null || { echo "error: nvcc not found: gpu-benches needs the CUDA toolkit (PATH=/usr/local/cuda/bin:\$PATH)" >&2; exit 2; }
fi
if [ -n "${MIRROR:-}" ]; then
  rm -rf "$OUTDIR/src" && mkdir -p "$OUTDIR/src"
  git --git-dir="$MIRROR" archive "$GB_COMMIT" $FILES | tar -x -C "$OUTDIR/src" \
    || { echo "error: could not export $GB_COMMIT from $MIRROR" >&2; exit 2; }
  SRC="$OUTDIR/src"
fi

mkdir -p "$OUTDIR"
START=$(date +%s)
SUMMARY="$OUTDIR/summary.tsv"
[ -n "$PARSE_ONLY" ] || printf 'step\texit\twall_ms\n' > "$SUMMARY"

# One step under what is left of the budget (and at most CAP seconds), or recorded as skipped.
run_step() {
  local name=$1 cap=$2; shift 2
  local left=$(( BUDGET - ($(date +%s) - START) ))
  if [ "$left" -le 0 ]; then
    printf '%s\tskipped\t0\n' "$name" >> "$SUMMARY"
    return 1
  fi
  [ "$cap" -gt 0 ] && [ "$cap" -lt "$left" ] && left=$cap
  local t0; t0=$(date +%s%N)
  timeout --signal=INT --kill-after=10 "$left" "$@" > "$OUTDIR/$name.txt" 2>&1
  local status=$?
  [ "$status" = 124 ] && status="budget"
  printf '%s\t%s\t%s\n' "$name" "$status" "$(( ($(date +%s%N) - t0) / 1000000 ))" >> "$SUMMARY"
  [ "$status" = 0 ]
}

if [ -z "$PARSE_ONLY" ]; then
  {
    echo "gpu-benches source: $SRC (expected commit $GB_COMMIT)"
    [ -n "${MIRROR:-}" ] && echo "exported from the bare clone $MIRROR"
    [ -e "$SRC/.git" ] && git -C "$SRC" rev-parse HEAD 2>/dev/null | sed 's/^/gpu-benches checkout at /'
    (cd "$SRC" && sha256sum gpu-stream/main.cu gpu-l2-cache/main.cu gpu-cache/main.cu)
    nvcc --version | tail -2
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
  } > "$OUTDIR/provenance.txt" 2>&1

  # Our side first: a calibration cut by the budget leaves no file, a program cut leaves rows.
  if [ -z "$CALIBRATION" ]; then
    # -o writes the file (atomically; none when cut); --json keeps progress lines out of the
    # step's output, which then holds the same JSON.
    run_step calibrate 0 "$BIN" calibrate --device cuda --json -o "$OUTDIR/calibration.json"
    [ -f "$OUTDIR/calibration.json" ] && CALIBRATION="$OUTDIR/calibration.json"
  fi

  # Stage the sources with the stub of gpu-metrics.hpp (see the header) and build.
  B="$OUTDIR/build"
  rm -rf "$B" && mkdir -p "$B/src/gpu-metrics"
  cp "$SRC"/MeasurementSeries.hpp "$SRC"/dtime.hpp "$SRC"/gpu-error.h "$SRC"/gpu-clock.cuh "$B/src/"
  cat > "$B/src/gpu-metrics/gpu-metrics.hpp" <<'HPP'
// Stand-in for gpu-benches' CUPTI counters, written by scripts/gpu-benches-compare.sh: the
// programs it builds call initMeasureMetric() (empty upstream too) and no counter.
#pragma once
#include <vector>
inline void initMeasureMetric() {}
inline void measureDRAMBytesStart() {}
inline void measureL2BytesStart() {}
inline std::vector<double> measureDRAMBytesStop() { return {0.0, 0.0}; }
inline std::vector<double> measureL2BytesStop() { return {0.0, 0.0}; }
HPP
  STUBS="$(dirname "$(command -v nvcc)")/../lib64/stubs"
  # The three at once (gpu-cache's 83 instantiations take the longest).
  for p in gpu-stream gpu-l2-cache gpu-cache; do
    mkdir -p "$B/src/$p" && cp "$SRC/$p/main.cu" "$B/src/$p/main.cu"
    run_step "build-$p" 0 nvcc -std=c++17 -O3 -arch="${GPU_BENCHES_ARCH:-native}" -Xcompiler -O2 \
      -o "$B/$p" "$B/src/$p/main.cu" -L"$STUBS" -lnvidia-ml &
  done
  wait
  # The L2 and memory first (what the calibration work compares), the L1 last.
  for p in gpu-l2-cache gpu-stream gpu-cache; do
    if [ -x "$B/$p" ]; then
      run_step "$p" "$PER_PROGRAM" "$B/$p"
    else
      printf '%s\tnot built\t0\n' "$p" >> "$SUMMARY"
    fi
  done
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$OUTDIR/provenance.txt" 2>&1
fi

python3 - "$OUTDIR" "${CALIBRATION:-}" "${L2_BYTES:-}" <<'PY'
import csv, json, math, os, re, statistics, sys

out, cal_path, l2_given = sys.argv[1], sys.argv[2], sys.argv[3]
KIB, MIB = 1024, 1024 * 1024
NUM = r"([0-9]+(?:\.[0-9]+)?)"

def lines(name):
    p = os.path.join(out, name + ".txt")
    return open(p, errors="replace").read().splitlines() if os.path.exists(p) else []

def parse_stream(text):
    """(block size, occupancy %, {kernel: GB/s}) per row; a row cut short keeps its values."""
    names = ["init", "read", "scale", "triad", "3pt", "5pt"]
    rows = []
    for line in text:
        if "blockSize" in line and "|" in line:
            names = line.split("|", 1)[1].split() or names
            continue
        m = re.match(r"^\s*(\d+)\s+(\d+)\s+" + NUM + r"\s*%\s*\|\s*GB/s:(.*)$", line)
        if not m:
            continue
        vals = re.findall(r"-?[0-9]+(?:\.[0-9]+)?", m.group(4))
        rows.append((int(m.group(1)), float(m.group(3)),
                     {k: float(v) for k, v in zip(names, vals)}))
    return rows

def parse_l2(text):
    """(data set bytes, GB/s) per row."""
    pat = re.compile(r"^\s*" + NUM + r" kB\s+" + NUM + r" kB\s+" + NUM + r"\s*ms\s+" + NUM +
                     r"%\s+" + NUM + r" GB/s")
    return [(float(m.group(2)) * KIB, float(m.group(5))) for m in map(pat.match, text) if m]

def parse_cache(text):
    """(buffer bytes, GB/s) per row."""
    pat = re.compile(r"^\s*" + NUM + r" kB\s+" + NUM + r"\s*ms\s+" + NUM + r"%\s+" + NUM +
                     r" GB/s")
    return [(float(m.group(1)) * KIB, float(m.group(4))) for m in map(pat.match, text) if m]

stream = parse_stream(lines("gpu-stream"))
l2 = parse_l2(lines("gpu-l2-cache"))
cache = parse_cache(lines("gpu-cache"))

with open(os.path.join(out, "curves.tsv"), "w") as f:
    f.write("program\tkernel\tdata_set_bytes\tblock_size\toccupancy_percent\tgbps\n")
    for b, occ, vals in stream:
        for k, v in vals.items():
            f.write(f"gpu-stream\t{k}\t{(2**27 + 2) * 8}\t{b}\t{occ}\t{v}\n")
    for size, v in l2:
        f.write(f"gpu-l2-cache\tread\t{size:.0f}\t1024\t\t{v}\n")
    for size, v in cache:
        f.write(f"gpu-cache\tread\t{size:.0f}\t256\t\t{v}\n")

cal = None
if cal_path:
    try:
        cal = json.load(open(cal_path))
        cal["bandwidth"]["levels"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"warning: {cal_path} has no bandwidth levels ({e}): the harness columns stay empty",
              file=sys.stderr)
        cal = None
l2_bytes, l2_from = 50 * MIB, "assumed 50 MiB"
if l2_given:
    l2_bytes, l2_from = int(l2_given), "--l2-bytes"
elif cal and (cal.get("device") or {}).get("l2_bytes"):
    l2_bytes, l2_from = int(cal["device"]["l2_bytes"]), "the calibration's device.l2_bytes"
elif cal:
    for c in cal.get("reported_caches") or []:
        if c.get("level") == "last level" and c.get("bytes"):
            l2_bytes, l2_from = int(c["bytes"]), "the calibration's reported_caches"

def harness_level(lo, hi):
    """The calibration's level holding the window's middle (geometric; its start where the
    window has no end)."""
    if not cal:
        return None
    mid = math.sqrt(max(lo, 1) * hi) if math.isfinite(hi) else lo
    for lv in cal["bandwidth"]["levels"]:
        a, b = lv["working_set_bytes"]
        if a <= mid <= (b if b is not None else float("inf")):
            return lv
    return None

def harness_window(access, lo, hi):
    if not cal:
        return None, 0
    v = [p["gbps"] for c in cal["bandwidth"].get("curves", []) if c.get("kernel") == access
         for p in c.get("points", []) if lo <= p["working_set_bytes"] <= hi
         and isinstance(p.get("gbps"), (int, float)) and math.isfinite(p["gbps"])]
    return (statistics.median(v), len(v)) if v else (None, 0)

def window(points, lo, hi):
    v = [g for s, g in points if lo <= s <= hi]
    return (statistics.median(v), min(v), max(v), len(v)) if v else None

def size(b):
    if b >= 1 << 30:
        return f"{b / (1 << 30):.3g} GiB"
    return f"{b / MIB:.3g} MiB" if b >= MIB else f"{b / KIB:.3g} KiB"

rows = []
def row(level, access, program, gb, lo, hi, note):
    lv = harness_level(lo, hi)
    hw, hn = harness_window(access, lo, hi)
    hl = lv.get(f"{access}_gbps") if lv else None
    rows.append({
        "level": level, "access": access, "gpu_benches_program": program,
        "gpu_benches_gbps": f"{gb:.1f}" if gb is not None else "",
        "window_bytes": f"{lo:.0f}-{hi:.0f}" if math.isfinite(hi) else f"{lo:.0f}-",
        "harness_level": lv["level"] if lv else "",
        "harness_level_gbps": f"{hl:.1f}" if hl is not None else "",
        "harness_window_gbps": f"{hw:.1f}" if hw is not None else "",
        "ratio_level": f"{hl / gb:.3f}" if hl is not None and gb else "",
        "ratio_window": f"{hw / gb:.3f}" if hw is not None and gb else "",
        "note": note + (f"; harness sweep points in the window: {hn}" if cal else ""),
    })

def windowed(level, program, points, lo, hi, extra=""):
    if not points:
        row(level, "read", program, None, lo, hi, "no output read" + extra)
        return
    w = window(points, lo, hi)
    top = max(s for s, _ in points)
    if w is None:
        row(level, "read", program, None, lo, hi,
            f"no data set in {size(lo)}-{size(hi)} (largest read: {size(top)})" + extra)
        return
    med, mn, mx, n = w
    row(level, "read", program, med, lo, min(hi, top),
        f"median of {n} data sets {size(lo)}-{size(min(hi, top))}, {mn:.0f}-{mx:.0f} GB/s" + extra)

L1_LO, L1_HI = 8 * KIB, 64 * KIB
L2_LO, L2_HI = 2 * MIB, l2_bytes / 2
MEM_LO = 4 * l2_bytes
windowed("L1", "gpu-cache", cache, L1_LO, L1_HI, "; one 256-thread block per SM")
windowed("L2", "gpu-l2-cache", l2, L2_LO, L2_HI)
windowed("L2", "gpu-cache", cache, L2_LO, L2_HI, "; every SM reads the same buffer")
windowed("memory", "gpu-l2-cache", l2, MEM_LO, float("inf"))
ARRAY = (2**27 + 2) * 8
for ours, theirs in [("read", "read"), ("write", "init"), ("copy", "scale"), ("triad", "triad")]:
    got = [(b, occ, v[theirs]) for b, occ, v in stream if theirs in v]
    if not got:
        row("memory", ours, f"gpu-stream {theirs}", None, MEM_LO, float("inf"), "no output read")
        continue
    b, occ, best = max(got, key=lambda t: t[2])
    full = [t for t in got if t[1] >= 99.9]
    note = f"best of {len(got)} block sizes (block {b}, {occ:g} % occupancy)"
    if full:
        note += f"; at 100 % occupancy {full[-1][2]:.0f}"
    row("memory", ours, f"gpu-stream {theirs}", best, MEM_LO, float("inf"),
        note + f"; arrays of {size(ARRAY)} doubles")

fields = list(rows[0].keys())
with open(os.path.join(out, "compare.csv.tmp"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    w.writerows(rows)
os.replace(os.path.join(out, "compare.csv.tmp"), os.path.join(out, "compare.csv"))

print(f"windows from an L2 of {size(l2_bytes)} ({l2_from}); calibration: {cal_path or 'none'}")
print(f"{'level':7} {'access':6} {'gpu-benches':20} {'GB/s':>9} {'harness level':>14} "
      f"{'GB/s':>9} {'ratio':>6} {'window GB/s':>12} {'ratio':>6}")
for r in rows:
    print(f"{r['level']:7} {r['access']:6} {r['gpu_benches_program']:20} "
          f"{r['gpu_benches_gbps'] or '-':>9} {r['harness_level'] or '-':>14} "
          f"{r['harness_level_gbps'] or '-':>9} {r['ratio_level'] or '-':>6} "
          f"{r['harness_window_gbps'] or '-':>12} {r['ratio_window'] or '-':>6}")
print(f"wrote {os.path.join(out, 'compare.csv')} and {os.path.join(out, 'curves.tsv')}")
PY
status=$?
if [ -z "$PARSE_ONLY" ]; then
  echo "total wall $(( $(date +%s) - START )) s of a $BUDGET s budget"
  column -t -s "$(printf '\t')" "$SUMMARY" 2>/dev/null || cat "$SUMMARY"
fi
exit "$status"
