#!/usr/bin/env python3
"""Run the harness binary on mutated copies of real input files and count what happens.

Every parser the binary reads is fed: calibration JSON, series JSON, validation JSON, a kernel
graph (TOML), a spec (TOML, with its expressions), an interval trace and a cluster report
(JSON), a network file (TOML). Each case copies one seed file, mutates it (truncation, bit
flips, NaN/∞/huge/negative numbers, renamed keys, wrong types, deep nesting, huge strings,
deleted or repeated lines) and runs one command on it in a fresh folder.

A case passes when the process exits 0 or 2 (never a signal, never another code), stderr
holds no panic, an exit 2 prints exactly one `error:` line, no line is longer than 400
characters, and no temporary or partial file is left in the folder.

    scripts/fuzz-cli.py --cases 100000 --jobs 2            # the long run (README)
    scripts/fuzz-cli.py --cases 3000 --jobs 2 --seed 7    # CI's bounded pass

Prints a summary and writes it as JSON with --report; exits 1 if any case failed (the first
failures are listed with the file that caused them, kept under --keep).
"""

import argparse
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAL = os.path.join(ROOT, "harness/tests/fixtures/stored/host-amd-epyc.json")


def first(pattern):
    import glob

    found = sorted(glob.glob(os.path.join(ROOT, pattern)))
    return found[0] if found else None


# (name, seed file, file name inside the case folder, command with {f} for the mutant)
TARGETS = [
    ("calibration", CAL, "cal.json", ["compare", CAL, "{f}", "--json"]),
    ("calibration-maxplus", CAL, "cal.json",
     ["maxplus", os.path.join(ROOT, "kernels/graphs/triad.toml"), "--calibration", "{f}", "--sizes", "1024"]),
    ("series", os.path.join(ROOT, "harness/tests/fixtures/series-sor-reordered.json"), "s.series.json", ["predict", "--series", "{f}", "--target", "4096"]),
    ("series-extrap", os.path.join(ROOT, "harness/tests/fixtures/series-sor-reordered.json"), "s.series.json", ["export-extrap", "{f}"]),
    ("validation", first("harness/tests/fixtures/stored/host-amd-epyc.suite/*.validate.*.json"), "v.json", ["export-extrap", "{f}"]),
    ("graph", os.path.join(ROOT, "kernels/graphs/jacobi5.toml"), "g.toml",
     ["maxplus", "{f}", "--calibration", CAL, "--sizes", "1024,2^20", "--json"]),
    ("graph-sor", os.path.join(ROOT, "kernels/graphs/sor_point.toml"), "g.toml",
     ["maxplus", "{f}", "--n-exec", "64", "--set", "t=4e-7", "--set", "T=5e-7", "--set", "tau=1e-9",
      "--set", "dt=1e-10", "--set", "dT=1e-10", "--set", "t_cache=5e-8", "--sizes", "514"]),
    ("spec", os.path.join(ROOT, "kernels/examples/saxpy.toml"), "saxpy.toml",
     ["run", "{f}", "--size", "1000", "--iters", "1", "--device", "host"]),
    ("spec-wavefront", os.path.join(ROOT, "kernels/examples/wavefront.toml"), "wavefront.toml",
     ["run", "{f}", "--size", "12", "--iters", "1", "--device", "host"]),
    ("spec-distribution", os.path.join(ROOT, "kernels/examples/fdtd2d.toml"), "fdtd2d.toml",
     ["run", "{f}", "--size", "16", "--iters", "1", "--device", "host", "--trace", "{dir}/t.json"]),
    ("trace", os.path.join(ROOT, "harness/tests/fixtures/stored/cluster/sor-rb.trace.json"), "t.json",
     ["predict-cluster", "--trace", "{f}", "--grid", "2x2", "--network", os.path.join(ROOT, "harness/tests/fixtures/stored/cluster/network.toml"),
      "--output", "{dir}/p"]),
    ("network", os.path.join(ROOT, "harness/tests/fixtures/stored/cluster/network.toml"), "n.toml",
     ["predict-cluster", "--trace", os.path.join(ROOT, "harness/tests/fixtures/stored/cluster/sor-rb.trace.json"), "--grid", "2", "--network", "{f}"]),
    ("cluster-report", os.path.join(ROOT, "harness/tests/fixtures/stored/cluster/sor-rb.2x1.measured-1.json"), "m.json",
     ["compare-cluster", os.path.join(ROOT, "harness/tests/fixtures/stored/cluster/sor-rb.2x1.predicted.json"), "{f}", "--output", "{dir}/c"]),
    # Everything shown is drawn from stored files: a mutated one must be skipped or drawn,
    # never crash the figures or the report.
    ("figures-calibration", CAL, "cal.json", ["figures", "--from", "{f}", "--out", "{dir}/f"]),
    ("report-calibration", CAL, "cal.json", ["report", "--from", "{f}", "--out", "{dir}/r"]),
    ("figures-validation", first("harness/tests/fixtures/stored/host-amd-epyc.suite/*.validate.*.json"), "v.json",
     ["figures", "--from", "{f}", "--out", "{dir}/f"]),
    ("figures-suite", os.path.join(ROOT, "harness/tests/fixtures/stored/host-amd-epyc.suite.json"), "s.json",
     ["report", "--from", "{f}", "--out", "{dir}/r"]),
    ("figures-maxplus", first("harness/tests/fixtures/stored/*.maxplus.*.json"), "m.json",
     ["figures", "--from", "{f}", "--out", "{dir}/f"]),
    ("figures-balance", first("harness/tests/fixtures/stored/*.balance.*.json"), "b.json",
     ["figures", "--from", "{f}", "--out", "{dir}/f"]),
    ("figures-cluster", os.path.join(ROOT, "harness/tests/fixtures/stored/cluster/sor-rb.2x1.predicted.json"), "p.json",
     ["figures", "--from", "{f}", "--out", "{dir}/f"]),
]

NUMBER = re.compile(rb"-?\d+(\.\d+)?([eE][-+]?\d+)?")
KEY = re.compile(rb'"([A-Za-z_][A-Za-z0-9_]*)"\s*:|^([A-Za-z_][A-Za-z0-9_]*)\s*=', re.M)
ODD_NUMBERS = [b"NaN", b"nan", b"inf", b"-inf", b"1e308", b"1e309", b"-1", b"0", b"-0", b"1e-320",
               b"99999999999999999999999", b"-99999999999999999999", b"2^62", b"0.5", b"\"x\"", b"[]", b"{}",
               b"true", b"null", b"\"\""]


def mutate(data, rng):
    kind = rng.randrange(10)
    if not data:
        return b"", "empty"
    if kind == 0:
        return data[: rng.randrange(len(data))], "truncate"
    if kind == 1:
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        return bytes(out), "bit flips"
    if kind in (2, 3):
        spans = [m.span() for m in NUMBER.finditer(data)]
        if spans:
            a, b = rng.choice(spans)
            return data[:a] + rng.choice(ODD_NUMBERS) + data[b:], "odd number"
    if kind == 4:
        keys = [m for m in KEY.finditer(data)]
        if keys:
            m = rng.choice(keys)
            g = 1 if m.group(1) else 2
            a, b = m.span(g)
            new = rng.choice([b"zzz", b"", m.group(g)[:-1], m.group(g) + b"_x", m.group(g).upper()])
            return data[:a] + new + data[b:], "renamed key"
    if kind == 5:
        i = rng.randrange(len(data))
        deep = rng.choice([b"[" * 5000, b"(" * 20000, b"{" * 3000, b"\"" + b"a" * 100000 + b"\""])
        return data[:i] + deep + data[i:], "deep nesting or huge string"
    if kind == 6:
        lines = data.split(b"\n")
        i = rng.randrange(len(lines))
        if rng.random() < 0.5:
            del lines[i]
            return b"\n".join(lines), "deleted line"
        lines.insert(i, lines[i])
        return b"\n".join(lines), "repeated line"
    if kind == 7:
        spans = [m.span() for m in NUMBER.finditer(data)]
        if spans:
            a, b = rng.choice(spans)
            return data[:a] + str(rng.choice([2**31, 2**32 + 1, 2**53 + 1, 2**63, 2**64, -2**31])).encode() + data[b:], "huge integer"
    if kind == 8:
        return data + data[: rng.randrange(len(data))], "appended garbage"
    i, j = sorted(rng.randrange(len(data)) for _ in range(2))
    return data[:i] + data[j:], "deleted span"


def run_case(args):
    index, seed, binary = args
    rng = random.Random(seed * 1_000_003 + index)
    name, source, file_name, command = TARGETS[index % len(TARGETS)]
    if source is None or not os.path.exists(source):
        return {"target": name, "status": "skipped"}
    with open(source, "rb") as f:
        data = f.read()
    mutant, how = mutate(data, rng)
    work = tempfile.mkdtemp(prefix="fuzz-")
    try:
        # A spec's kernel file sits beside it.
        for extra in ("saxpy.cl", "wavefront.cl", "fdtd2d.kern", "fdtd2d-reference.toml"):
            src = os.path.join(ROOT, "kernels/examples", extra)
            if os.path.exists(src):
                shutil.copy(src, work)
        path = os.path.join(work, file_name)
        with open(path, "wb") as f:
            f.write(mutant)
        argv = [binary] + [c.replace("{f}", path).replace("{dir}", work) for c in command]
        try:
            p = subprocess.run(argv, cwd=work, capture_output=True, timeout=60)
            code, err = p.returncode, p.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            code, err = "timeout", ""
        problems = []
        if code == "timeout":
            problems.append("ran past 60 s")
        elif code < 0:
            problems.append(f"killed by signal {-code}")
        elif code not in (0, 2):
            problems.append(f"exit code {code}")
        if "panicked" in err:
            problems.append("panic")
        if code == 2 and sum(1 for l in err.splitlines() if l.startswith("error:")) != 1:
            problems.append("not exactly one error line")
        if any(len(l) > 400 for l in err.splitlines()):
            problems.append("an error line over 400 characters")
        left = [n for n in os.listdir(work) if n.endswith(".tmp")]
        if left:
            problems.append(f"temporaries left: {left}")
        result = {"target": name, "mutation": how, "code": code, "status": "ok" if not problems else "fail"}
        if problems:
            result["problems"] = problems
            result["stderr"] = err[-600:]
            result["mutant"] = mutant[:2000].decode("utf-8", "replace")
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin", default=os.environ.get("HARNESS_BIN", os.path.join(ROOT, "target/release/harness")))
    ap.add_argument("--report", help="write the summary as JSON here")
    args = ap.parse_args()
    if args.cases < 1 or args.jobs < 1:
        print("error: --cases and --jobs must be at least 1", file=sys.stderr)
        return 2
    args.bin = os.path.abspath(args.bin)  # each case runs in a folder of its own
    if not os.access(args.bin, os.X_OK):
        print(f"error: {args.bin} is not an executable (cargo build --release, or give --bin)", file=sys.stderr)
        return 2
    started = time.time()
    counts, failures = {}, []
    with mp.Pool(args.jobs) as pool:
        for i, r in enumerate(pool.imap_unordered(run_case, ((i, args.seed, args.bin) for i in range(args.cases)), chunksize=16)):
            key = (r["target"], r["status"], str(r.get("code")))
            counts[key] = counts.get(key, 0) + 1
            if r["status"] == "fail":
                failures.append(r)
            if (i + 1) % 5000 == 0:
                print(f"{i + 1} cases, {len(failures)} failures, {time.time() - started:.0f} s", file=sys.stderr)
    total = sum(counts.values())
    ran = total - sum(v for k, v in counts.items() if k[1] == "skipped")
    by_code = {}
    for (target, status, code), v in counts.items():
        if status != "skipped":
            by_code[code] = by_code.get(code, 0) + v
    summary = {
        "cases": total,
        "ran": ran,
        "seconds": round(time.time() - started, 1),
        "exit_codes": by_code,
        "failures": len(failures),
        "signals": sum(1 for f in failures if any("signal" in p for p in f["problems"])),
        "panics": sum(1 for f in failures if "panic" in f["problems"]),
        "partial_files": sum(1 for f in failures if any("temporaries" in p for p in f["problems"])),
        "per_target": {t: sum(v for k, v in counts.items() if k[0] == t and k[1] != "skipped") for t, *_ in TARGETS},
        "first_failures": failures[:10],
        "seed": args.seed,
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "first_failures"}, indent=1))
    for f in failures[:10]:
        print(f"FAIL {f['target']} ({f['mutation']}): {f['problems']}\n  {f['stderr'][-300:]!r}", file=sys.stderr)
    if args.report:
        with open(args.report + ".tmp", "w") as fh:
            json.dump(summary, fh, indent=1)
        os.replace(args.report + ".tmp", args.report)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
