#!/usr/bin/env python3
"""Run the harness binary on mutated inputs, arguments, output paths and signals.

Four kinds of case, mixed by case index (deterministic for a --seed), chosen with --kinds:

files    Every parser the binary reads is fed: calibration JSON, series JSON, validation
         JSON, a kernel graph (TOML), a spec (TOML, with its expressions), a kernel source
         (spec-init's reader), an interval trace and a cluster report (JSON), a network
         file (TOML). Each case copies one seed file,
         mutates it (truncation, bit flips, NaN/∞/huge/negative numbers, renamed keys, wrong
         types, deep nesting, huge strings, deleted or repeated lines) and runs one command.
args     A valid command line of a cheap command (predict, maxplus, balance, export-extrap,
         run, series, figures, report, compare, spec-init, plot-validations,
         predict-cluster, compare-cluster) with its arguments mutated: numbers made huge, negative, zero,
         NaN, 2^64, blank-padded or garbage; a flag dropped, repeated, repeated with another
         value or unknown; an empty, 5,000-character, non-UTF-8 or control-character value;
         a FIFO, a folder or nothing where an input file goes.
paths    A command that writes an output (export-extrap -o, run --trace, run --dump,
         predict-cluster/compare-cluster --output, figures/report --out, series --output-dir,
         plot-validations --plot-dir) given, where the output goes: a FIFO without a reader
         (an error, at once) or with one draining it, a symlink to a file or a folder in the
         case folder (followed; the link stays a link), a dangling symlink, a 240- or
         300-character name, a path past PATH_MAX, a path under a regular file, a folder
         where a file goes, a file where a folder goes, a name with odd bytes.
signals  A command that runs a while on the host (series, validate, figures, report, a traced
         run) sent SIGINT, SIGTERM or SIGHUP (sometimes twice) after 0.05–1.5 s; or a command
         whose standard output is a pipe closed at once or after its first line.

Each case runs in a folder of its own (`case/`), with a sentinel folder beside it. A case
passes when the process exits 0 or 2 (130 after a signal; what its kind expects), never by a
signal, within its time limit; stderr holds no panic and no raw control character; an exit 2
prints exactly one `error:` line; no stderr line is longer than 400 characters; no temporary
(`*.tmp`) is left anywhere under the case folder; every JSON, SVG, PNG and HTML file the run
wrote or changed is whole (parses, or ends as its format ends); nothing was written outside
the case folder (the sentinel is unchanged, the parent holds nothing new). A path case also
checks that the special file it made keeps its kind (a FIFO stays a FIFO, a symlink a
symlink to the same place, a followed symlink's file is updated). A process that a closed
standard output ends by SIGPIPE (exit 141) is counted as a finding, not a failure, when it
leaves nothing partial. The repository's fixtures and kernels are checked unchanged at the end.

    scripts/fuzz-cli.py --cases 100000 --jobs 2            # the long run (README)
    scripts/fuzz-cli.py --cases 5000 --jobs 2 --seed 7    # CI's bounded pass
    scripts/fuzz-cli.py --seed 7 --only 1234              # one case again, its folder kept

Prints a summary and writes it as JSON with --report; exits 1 if any case failed (the first
failures are listed with their command line and the --only line that runs them again).
"""

import argparse
import errno
import json
import multiprocessing as mp
import os
import random
import re
import select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

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
    ("kernel-source", os.path.join(ROOT, "kernels/examples/gemm.kern"), "gemm.kern",
     ["spec-init", "{f}", "--kernel", "gemm"]),
    ("kernel-source-cl", os.path.join(ROOT, "kernels/examples/saxpy.cl"), "saxpy.cl", ["spec-init", "{f}"]),
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


# The new kinds and their share of a mixed run (percent). A signal case takes a second or
# two (it waits for the signal and for the run to stop), the others a few milliseconds.
KINDS = ("files", "args", "paths", "signals")
WEIGHTS = {"files": 46, "args": 40, "paths": 13.4, "signals": 0.6}

FIXTURES = os.path.join(ROOT, "harness/tests/fixtures")
STORED = os.path.join(FIXTURES, "stored")
# Inputs a case may use, copied into its folder as in/NAME: no case reads or writes beside a
# file of the repository.
INPUTS = {
    "s.series.json": os.path.join(FIXTURES, "series-sor-reordered.json"),
    "cal.json": CAL,
    "cal2.json": os.path.join(STORED, "opencl-pthread-skylake-avx512-amd-epyc.json"),
    "v.json": first("harness/tests/fixtures/stored/host-amd-epyc.suite/*.validate.*.json"),
    "triad.toml": os.path.join(ROOT, "kernels/graphs/triad.toml"),
    "sor_point.toml": os.path.join(ROOT, "kernels/graphs/sor_point.toml"),
    "t.json": os.path.join(STORED, "cluster/sor-rb.trace.json"),
    "n.toml": os.path.join(STORED, "cluster/network.toml"),
    "p.json": os.path.join(STORED, "cluster/sor-rb.2x1.predicted.json"),
    "m.json": os.path.join(STORED, "cluster/sor-rb.2x1.measured-1.json"),
    "saxpy.toml": os.path.join(ROOT, "kernels/examples/saxpy.toml"),
    "saxpy.cl": os.path.join(ROOT, "kernels/examples/saxpy.cl"),
    "stored": STORED,
}

CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")  # a C0 control other than tab and newline


# --- The case folder -------------------------------------------------------------------------


def survey(top, before=None):
    """Everything under `top` (never following a symlink, never opening a FIFO), as
    {relative path: (type, size, mtime, link target)}; with `before`, also the temporaries
    that appeared and the files written or changed that are not whole."""
    seen, temporaries, broken = {}, [], []
    for dirpath, dirnames, filenames, dfd in os.fwalk(top, follow_symlinks=False):
        rel = os.path.relpath(dirpath, top)
        for name in dirnames + filenames:
            key = os.path.normpath(os.path.join(rel, name))
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except OSError:
                continue
            kind = stat.S_IFMT(st.st_mode)
            link = None
            if kind == stat.S_IFLNK:
                try:
                    link = os.readlink(name, dir_fd=dfd)
                except OSError:
                    pass
            seen[key] = (kind, st.st_size, st.st_mtime_ns, link)
            if before is None:
                continue
            if name.endswith(".tmp") and key not in before:
                temporaries.append(key)
            if kind == stat.S_IFREG and before.get(key) != seen[key]:
                why = not_whole(name, dfd)
                if why:
                    broken.append(f"{key[-120:]}: {why}")
    return seen, temporaries, broken


def not_whole(name, dfd):
    """Why the file `name` (in the folder `dfd`) is not a whole file of its format, or None."""
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if suffix not in ("json", "svg", "png", "html"):
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
        with os.fdopen(fd, "rb") as f:
            data = f.read()
    except OSError as e:
        return f"unreadable ({e.strerror})"
    if suffix == "json":
        try:
            json.loads(data)
        except (ValueError, UnicodeDecodeError) as e:
            return f"not JSON ({str(e)[:120]})"
    elif suffix == "svg":
        try:
            ET.fromstring(data)
        except ET.ParseError as e:
            return f"not well-formed XML ({e})"
    elif suffix == "png":
        if not (data.startswith(b"\x89PNG\r\n\x1a\n") and data.endswith(b"IEND\xaeB`\x82")):
            return "not a whole PNG"
    elif b"</html>" not in data[-400:].lower():
        return "no </html> at its end"
    return None


class Folder:
    """A case's folder, `case/` (the working directory and the only place a case writes to),
    with a sentinel folder beside it that nothing may touch."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="fuzz-")
        self.case = os.path.join(self.root, "case")
        self.sentinel = os.path.join(self.root, "sentinel")
        os.mkdir(self.case)
        os.makedirs(os.path.join(self.sentinel, "sub"))
        with open(os.path.join(self.sentinel, "keep.json"), "w") as f:
            f.write('{"keep": true}\n')
        with open(os.path.join(self.sentinel, "sub", "keep.txt"), "w") as f:
            f.write("keep\n")
        self.sentinel_before = survey(self.sentinel)[0]
        self.before = {}

    def path(self, rel):
        """`rel` (str or bytes) under the case folder."""
        if isinstance(rel, bytes):
            return os.path.join(os.fsencode(self.case), rel)
        return os.path.join(self.case, rel)

    def put(self, names):
        """Copy the inputs named (keys of INPUTS) into case/in/."""
        os.makedirs(self.path("in"), exist_ok=True)
        for name in names:
            source = INPUTS[name]
            if source is None or not os.path.exists(source):
                return False
            if os.path.isdir(source):
                shutil.copytree(source, self.path(os.path.join("in", name)))
            else:
                shutil.copy(source, self.path(os.path.join("in", name)))
            if name == "saxpy.toml":
                shutil.copy(INPUTS["saxpy.cl"], self.path("in"))
        return True

    def settle(self):
        """What is there before the run: only what changes after it is checked."""
        self.before = survey(self.case)[0]

    def check(self):
        """Temporaries, files that are not whole, writes outside the case folder."""
        problems = []
        after, temporaries, broken = survey(self.case, self.before)
        if temporaries:
            problems.append(f"temporaries left: {temporaries[:5]}")
        if broken:
            problems.append(f"partial files: {broken[:5]}")
        extra = sorted(set(os.listdir(self.root)) - {"case", "sentinel"})
        if extra:
            problems.append(f"wrote outside the case folder: {[e[:80] for e in extra[:5]]}")
        now = survey(self.sentinel)[0]
        if now != self.sentinel_before:
            changed = sorted(k for k in set(now) | set(self.sentinel_before) if now.get(k) != self.sentinel_before.get(k))
            problems.append(f"wrote outside the case folder: the sentinel beside it changed: {changed[:5]}")
        return problems, after

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


def judge(code, out, err, expect, limit, check_stdout=True):
    """The problems of a finished run: its exit, its messages."""
    problems = []
    if code == "timeout":
        problems.append(f"ran past {limit} s")
    elif code < 0:
        problems.append(f"killed by signal {-code}")
    elif code not in expect:
        problems.append(f"exit code {code} (expected {' or '.join(map(str, sorted(expect)))})")
    text = err.decode("utf-8", "replace")
    if "panicked" in text:
        problems.append("panic")
    if code == 2 and sum(1 for l in text.splitlines() if l.startswith("error:")) != 1:
        problems.append("not exactly one error line")
    if any(len(l) > 400 for l in text.splitlines()):
        problems.append("an error line over 400 characters")
    if CONTROL.search(err):
        problems.append("a raw control character on stderr")
    if check_stdout and CONTROL.search(out or b""):
        problems.append("a raw control character on stdout")
    return problems


def shell(argv):
    """`argv` as a shell line (bytes and control characters as $'\\xNN')."""
    words = []
    for a in argv:
        b = a if isinstance(a, bytes) else os.fsencode(a)
        if b and all(32 <= c < 127 for c in b):
            words.append(shlex.quote(b.decode()))
        else:
            words.append("$'" + "".join(chr(c) if 32 <= c < 127 and c not in b"'\\" else f"\\x{c:02x}" for c in b) + "'")
    return " ".join(words)


class Child:
    """A started harness process whose stdout and stderr are read as they come."""

    def __init__(self, argv, cwd, close_stdout=None):
        self.argv = argv
        self.p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.started = time.time()
        self.parts = {"out": b"", "err": b""}
        self.threads = [threading.Thread(target=self._read, args=("err", self.p.stderr), daemon=True)]
        if close_stdout == "at once":
            self.p.stdout.close()
        elif close_stdout == "after a line":
            self.threads.append(threading.Thread(target=self._first_line, daemon=True))
        else:
            self.threads.append(threading.Thread(target=self._read, args=("out", self.p.stdout), daemon=True))
        for t in self.threads:
            t.start()

    def _read(self, key, stream):
        self.parts[key] = stream.read()
        stream.close()

    def _first_line(self):
        self.parts["out"] = self.p.stdout.readline()
        self.p.stdout.close()

    def wait(self, limit):
        """The exit code (negative: a signal), or "timeout" (the process is then killed)."""
        try:
            code = self.p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            code = "timeout"
        for t in self.threads:
            t.join(10)
        return code


# --- args: mutated command lines -------------------------------------------------------------

# A command line is a list of groups (a subcommand, a positional, a flag with its value), each
# token tagged by its first character: @ an input path, > an output path, # a number, , a
# list of sizes, = a NAME=VALUE, % a processor grid, ! a device (never dropped: without it
# the best device found, PoCL, would be used), ~ a word; untagged tokens are literal.
ARG_COMMANDS = [
    ("predict", [["predict"], ["--series", "@in/s.series.json"], ["--target", "#4096"]],
     [["--json"], ["--calibration", "@in/cal.json"], ["--quantity", "kernels"]]),
    ("maxplus", [["maxplus"], ["@in/triad.toml"], ["--sizes", ",1024"], ["--set", "=t=1e-7"]],
     [["--calibration", "@in/cal.json"], ["--n-exec", "#64"], ["--json"], ["--set", "=T=2e-7"]]),
    ("maxplus-sor", [["maxplus"], ["@in/sor_point.toml"], ["--n-exec", "#64"], ["--set", "=t=4e-7"],
                     ["--set", "=T=5e-7"], ["--set", "=tau=1e-9"], ["--sizes", ",514,2^20"]],
     [["--set", "=dt=1e-10"], ["--set", "=dT=1e-10"], ["--set", "=t_cache=5e-8"], ["--json"]]),
    ("balance", [["balance"], ["--phi", "#0.3"], ["--rho", "#10"], ["--q", "#4"], ["--r", "#1"]],
     [["--json"]]),
    ("balance-times", [["balance"], ["--times", ",1,0.3,0.07"], ["--q", "#4"], ["--r", "#1"]], [["--json"]]),
    ("export-extrap", [["export-extrap"], ["@in/s.series.json"], ["-o", ">out.txt"]], []),
    ("run", [["run"], ["~vadd"], ["--size", "#1000"], ["--iters", "#2"], ["--device", "!host"]],
     [["--json"], ["--no-verify"]]),
    ("run-spec", [["run"], ["@in/saxpy.toml"], ["--size", "#1000"], ["--iters", "#1"], ["--device", "!opencl"]],
     [["--json"]]),
    ("series", [["series"], ["~vadd"], ["--sizes", ",1000,2000"], ["--repeat", "#2"], ["--iters", "#2"],
                ["--device", "!host"], ["--output-dir", ">d"]],
     [["--max-repeat", "#3"], ["--ci-target", "#5"], ["--format", "~extrap"]]),
    ("figures", [["figures"], ["--from", "@in/cal.json"], ["--out", ">f"]], [["--device", "~host-amd-epyc"]]),
    ("report", [["report"], ["--from", "@in/cal.json"], ["--out", ">r"]], []),
    ("compare", [["compare"], ["@in/cal.json"], ["@in/cal2.json"]], [["--json"]]),
    ("spec-init", [["spec-init"], ["@in/saxpy.cl"]], [["-o", ">spec.toml"], ["--kernel", "~saxpy"]]),
    ("plot-validations", [["plot-validations"], ["@in/v.json"], ["--plot-dir", ">pl"]], [["--name", "~fractal"]]),
    ("predict-cluster", [["predict-cluster"], ["--trace", "@in/t.json"], ["--grid", "%2x2"],
                         ["--network", "@in/n.toml"]],
     [["--output", ">p"], ["--power", "#2"], ["--json"]]),
    ("compare-cluster", [["compare-cluster"], ["@in/p.json"], ["@in/m.json"]], [["--output", ">c"], ["--json"]]),
]

# Numbers no command may take as a long but valid request: every one is refused, or cheap.
ODD_ARGS = ["0", "-1", "-0", "NaN", "nan", "inf", "-inf", "1e308", "1e309", "1e-320", "2^64", "2^63",
            "2^-1", "2^", "^", "2^2^2", "-2^10", "18446744073709551616", "18446744073709551615",
            "340282366920938463463374607431768211456", "99999999999999999999999", "4294967295",
            "4294967296", "2147483648", "1073741825", " 16", "16 ", "\t16", "+16", "0x10", "1_000",
            "16.5", "1e3", "½", "１６", "abc", "", "-", "--", "1,2", "9" * 400]
ODD_ASSIGNMENTS = ["t=NaN", "t=-1", "t=1e308", "t=1e309", "t=0", "t=-0", "t=86401", "zz=1e-7", "t", "=1e-7",
                   "t=", "t==1", "T=1e-7", "t=1e-7=2", "t=0x1", "t= 1e-7", "t=2^64", "T=inf", "tau=-1e-9",
                   "t=1e-7\n", "n=4"]
ODD_GRIDS = ["0x0", "0", "1x0", "65536x65536", "4294967295", "4294967296", "2x", "x2", "2x2x2", "-1x2",
             "2×2", " 2x2", "2X2", "1e3", "100000x100000", "18446744073709551615x2"]
ODD_WORDS = ["", "VADD", "a/b", "../../escaped", "x" * 300, "-", "vadd ", "*"]
ODD_INPUTS = ["in/missing.json", "in", ".", "in/fifo.json", "in/empty.json", "in/cal.json/x"]
UNKNOWN_FLAGS = ["--bogus", "--bogus=1", "-Z", "--jso", "--JSON", "--help", "-h", "--version", "-V", "--", "-"]
CONTROLS = ["\x1b[31m", "\n", "\r", "\x07", "\x7f"]


TAGS = ("@", ">", "#", ",", "=", "%", "!", "~")


def mutate_args(groups, rng):
    """Apply one to three mutations to a copy of `groups`; the mutated groups and what was done."""
    groups = [list(g) for g in groups]
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.randrange(14)
        values = [(gi, ti) for gi, g in enumerate(groups) if gi > 0 for ti, t in enumerate(g)
                  if isinstance(t, str) and t[:1] in TAGS]
        if op == 0 and values:  # a value made odd for its kind
            gi, ti = rng.choice(values)
            tag = groups[gi][ti][0]
            new = {"#": ODD_ARGS, "=": ODD_ASSIGNMENTS, "%": ODD_GRIDS, "~": ODD_WORDS, "@": ODD_INPUTS,
                   ">": ["", ".", "in", "in/cal.json/x", "x" * 300], "!": ["", "99", "x" * 300],
                   ",": None}[tag]
            if new is None:
                parts = groups[gi][ti][1:].split(",")
                parts[rng.randrange(len(parts))] = rng.choice(ODD_ARGS + ["", "2^20"])
                value = ",".join(parts)
            else:
                value = rng.choice(new)
            groups[gi][ti] = tag + value
            done.append(f"odd value {value[:40]!r}")
        elif op == 1:  # a flag or positional dropped
            droppable = [gi for gi, g in enumerate(groups) if gi > 0 and not any(isinstance(t, str) and t.startswith("!") for t in g)]
            if droppable:
                gi = rng.choice(droppable)
                done.append(f"dropped {groups[gi][0]!r}")
                del groups[gi]
        elif op in (2, 3):  # repeated, with the same or another value
            flags = [gi for gi, g in enumerate(groups) if gi > 0 and isinstance(g[0], str) and g[0].startswith("-")]
            if flags:
                gi = rng.choice(flags)
                copy = list(groups[gi])
                if op == 3 and len(copy) > 1 and copy[1][:1] == "#":
                    copy[1] = "#" + rng.choice(["8192", "0", "-1", "2^10", "NaN"])
                elif op == 3 and len(copy) > 1 and copy[1][:1] == "=":
                    copy[1] = "=" + rng.choice(["t=2e-7", "t=NaN", "T=1e-6"])
                other = copy != groups[gi]
                groups.insert(rng.randrange(1, len(groups) + 1), copy)
                done.append(f"repeated {copy[0]!r}" + (" with another value" if other else ""))
        elif op == 4:  # an unknown flag
            flag = rng.choice(UNKNOWN_FLAGS)
            groups.insert(rng.randrange(1, len(groups) + 1), [flag])
            done.append(f"flag {flag!r}")
        elif op == 5:  # an empty argument
            groups.insert(rng.randrange(1, len(groups) + 1), [""])
            done.append("empty argument")
        elif op == 6 and values:  # a 5,000-character value
            gi, ti = rng.choice(values)
            tag = groups[gi][ti][0]
            groups[gi][ti] = tag + ("9" if tag in "#," else "a") * 5000
            done.append("5,000-character value")
        elif op == 7 and values:  # non-UTF-8 bytes
            gi, ti = rng.choice(values)
            t = groups[gi][ti]
            groups[gi][ti] = t[0].encode() + os.fsencode(t[1:]) + rng.choice([b"\xff\xfe", b"\xc3\x28", b"\x80"])
            done.append("non-UTF-8 value")
        elif op == 8 and values:  # control characters
            gi, ti = rng.choice(values)
            c = rng.choice(CONTROLS)
            groups[gi][ti] = groups[gi][ti] + c
            done.append(f"control character {c!r}")
        elif op == 9:  # --flag=value
            flags = [gi for gi, g in enumerate(groups) if gi > 0 and len(g) == 2 and isinstance(g[0], str)
                     and g[0].startswith("--") and isinstance(g[1], str)]
            if flags:
                gi = rng.choice(flags)
                groups[gi] = [groups[gi][0] + "=" + groups[gi][1][1:]]
                done.append(f"{groups[gi][0][:30]!r} in one word")
        elif op == 10 and len(groups) > 2:  # two groups swapped
            a, b = rng.sample(range(1, len(groups)), 2)
            groups[a], groups[b] = groups[b], groups[a]
            done.append("order changed")
        elif op == 11:  # another subcommand name
            name = rng.choice(["PREDICT", "pred", "bogus", "", "help", groups[0][0] + "s"])
            groups[0] = [name]
            done.append(f"subcommand {name!r}")
        elif op == 12 and values:  # a value with blanks around it
            gi, ti = rng.choice(values)
            t = groups[gi][ti]
            groups[gi][ti] = t[0] + rng.choice([" ", "\t", ""]) + t[1:] + rng.choice([" ", ""])
            done.append("blanks around a value")
        elif op == 13:  # a flag's value taken by a flag
            flags = [gi for gi, g in enumerate(groups) if gi > 0 and len(g) == 2]
            if flags:
                gi = rng.choice(flags)
                groups[gi] = [groups[gi][0], rng.choice(["--json", "-o", "--help"])]
                done.append(f"{groups[gi][0]!r} without its value")
    return groups, done or ["none"]


def flatten(groups):
    """The argv of tagged groups."""
    argv = []
    for g in groups:
        for t in g:
            if isinstance(t, bytes):
                argv.append(t[1:] if t[:1].decode("latin-1") in TAGS else t)
            elif t[:1] in TAGS:
                argv.append(t[1:])
            else:
                argv.append(t)
    return argv


def args_case(index, ordinal, seed, binary, folder):
    rng = random.Random(seed * 1_000_003 + index)
    name, groups, optional = ARG_COMMANDS[ordinal % len(ARG_COMMANDS)]
    groups = groups + [g for g in optional if rng.random() < 0.3]
    inputs = sorted({t[4:] for g in groups for t in g if isinstance(t, str) and t.startswith("@in/")})
    if not folder.put(inputs):
        return {"kind": "args", "target": name, "status": "skipped"}
    os.mkfifo(folder.path("in/fifo.json"))
    open(folder.path("in/empty.json"), "w").close()
    mutated, how = mutate_args(groups, rng)
    argv = [binary] + flatten(mutated)
    folder.settle()
    limit = 60
    child = Child(argv, folder.case)
    code = child.wait(limit)
    out, err = child.parts["out"], child.parts["err"]
    problems = judge(code, out, err, {0, 2}, limit)
    more, _ = folder.check()
    return {"kind": "args", "target": name, "mutation": "; ".join(how), "code": code,
            "problems": problems + more, "stderr": err, "stdout": out, "argv": argv,
            "setup": "in/ holds copies of the fixtures named, in/fifo.json a FIFO, in/empty.json an empty file"}


# --- paths: outputs that are special files -----------------------------------------------------

# (name, what the path names: a file, a stem (STEM.json and another) or a folder, argv)
PATH_COMMANDS = [
    ("export-extrap", "file", ["export-extrap", "in/s.series.json", "-o", "{P}"], []),
    ("run --trace", "file", ["run", "jacobi2d", "-n", "34", "--iters", "2", "--device", "host", "--trace", "{P}"], []),
    ("predict-cluster", "stem", ["predict-cluster", "--trace", "in/t.json", "--grid", "2x2", "--network", "in/n.toml",
                                 "--output", "{P}"], [".json", ".html"]),
    ("compare-cluster", "stem", ["compare-cluster", "in/p.json", "in/m.json", "--output", "{P}"], [".json", ".md"]),
    ("figures", "dir", ["figures", "--from", "in/cal.json", "--out", "{P}"], []),
    ("report", "dir", ["report", "--from", "in/cal.json", "--out", "{P}"], []),
    ("series", "dir", ["series", "vadd", "--sizes", "1000,2000", "--repeat", "2", "--iters", "2", "--device", "host",
                       "--output-dir", "{P}"], []),
    ("run --dump", "dir", ["run", "in/saxpy.toml", "--size", "1000", "--iters", "1", "--device", "opencl", "--dump", "{P}"], []),
    ("plot-validations", "dir", ["plot-validations", "in/v.json", "--plot-dir", "{P}"], []),
]

# variant: {what the path names: the exit codes expected}
PATH_VARIANTS = {
    "FIFO without a reader": {"file": {2}, "stem": {2}, "dir": {2}},
    "FIFO with a reader": {"file": {0}, "stem": {0}},
    "symlink to a file": {"file": {0}, "stem": {0}, "dir": {2}},
    "symlink to a folder": {"file": {2}, "stem": {2}, "dir": {0}},
    "dangling symlink": {"file": {0, 2}, "stem": {0, 2}, "dir": {0, 2}},
    "240-character name": {"file": {0}, "stem": {0}, "dir": {0}},
    "300-character name": {"file": {2}, "stem": {2}, "dir": {2}},
    "path past PATH_MAX": {"file": {2}, "stem": {2}, "dir": {2}},
    "under a regular file": {"file": {2}, "stem": {2}, "dir": {2}},
    "folder where a file goes": {"file": {2}, "stem": {2}},
    "file where a folder goes": {"dir": {2}},
    "odd bytes in the name": {"file": {0}, "stem": {0}, "dir": {0}},
    "new parent folders": {"file": {0, 2}, "stem": {0, 2}, "dir": {0}},
}
ODD_NAMES = [b"out-\xff\xfe", b"out\x1b[31m", b"out\nline", b" out ", b"./-out", b"out\ttab",
             "ünïcode-✓".encode(), b"out\rcr", b"a b;c&d$(e)"]


class Drain:
    """A reader of a FIFO, from before the process starts to after it ends."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.got = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            data = b""
            if ready:
                try:
                    data = os.read(self.fd, 1 << 16)
                except BlockingIOError:
                    pass
                self.got += len(data)
            if not data:
                if self.stop.is_set():
                    break
                time.sleep(0.005)

    def close(self):
        self.stop.set()
        self.thread.join(10)
        os.close(self.fd)


def paths_case(index, ordinal, seed, binary, folder):
    rng = random.Random(seed * 1_000_003 + index)
    name, what, command, suffixes = PATH_COMMANDS[ordinal % len(PATH_COMMANDS)]
    variants = [v for v, e in PATH_VARIANTS.items() if what in e]
    variant = variants[(ordinal // len(PATH_COMMANDS) + rng.randrange(len(variants))) % len(variants)]
    expect = PATH_VARIANTS[variant][what]
    inputs = sorted({c[3:] for c in command if c.startswith("in/")})
    if not folder.put(inputs):
        return {"kind": "paths", "target": name, "status": "skipped"}
    base = {"file": "out.txt", "stem": "out", "dir": "outdir"}[what]
    arg = base
    special = base + (rng.choice(suffixes) if what == "stem" else "")  # where the special file goes
    setup = variant
    drain = None
    if variant.startswith("FIFO"):
        os.mkfifo(folder.path(special))
        if variant == "FIFO with a reader":
            drain = Drain(folder.path(special))
    elif variant.startswith("symlink to a"):
        target = "in/real.out" if variant == "symlink to a file" else "in/realdir"
        if variant == "symlink to a file":
            with open(folder.path(target), "w") as f:
                f.write("old\n")
        else:
            os.mkdir(folder.path(target))
            with open(folder.path(target + "/marker.txt"), "w") as f:
                f.write("marker\n")
        link = rng.choice([target, folder.path(target)])
        os.symlink(link, folder.path(special))
        setup = f"{special} -> {link}"
    elif variant == "dangling symlink":
        link = rng.choice(["gone.out", "in/nowhere/gone.out"])
        os.symlink(link, folder.path(special))
        setup = f"{special} -> {link} (missing)"
    elif variant == "240-character name":
        arg = special = "n" * 240
    elif variant == "300-character name":
        arg = special = "n" * 300
    elif variant == "path past PATH_MAX":
        arg = special = "/".join(["d" * 250] * 17) + "/out"
    elif variant == "under a regular file":
        with open(folder.path("plain.txt"), "w") as f:
            f.write("plain\n")
        arg = "plain.txt/out"
        special = "plain.txt"
    elif variant == "folder where a file goes":
        os.mkdir(folder.path(special))
        with open(folder.path(special + "/marker.txt"), "w") as f:
            f.write("marker\n")
    elif variant == "file where a folder goes":
        with open(folder.path(special), "w") as f:
            f.write("plain\n")
    elif variant == "odd bytes in the name":
        arg = special = rng.choice(ODD_NAMES)
    elif variant == "new parent folders":
        arg = special = "new/sub/" + base
    argv = [binary] + [arg if c == "{P}" else c for c in command]
    folder.settle()
    before = folder.before.get(os.path.normpath(os.fsdecode(special)))
    limit = 20 if variant == "FIFO without a reader" else 60
    child = Child(argv, folder.case)
    code = child.wait(limit)
    got = None
    if drain:
        drain.close()
        got = drain.got
    out, err = child.parts["out"], child.parts["err"]
    problems = judge(code, out, err, expect, limit)
    more, after = folder.check()
    problems += more
    # The special file keeps its kind, and what a followed link names is what changed.
    now = after.get(os.path.normpath(os.fsdecode(special)))
    if before is not None and variant not in ("odd bytes in the name", "240-character name", "new parent folders"):
        if now is None or now[0] != before[0] or now[3] != before[3]:
            problems.append(f"{os.fsdecode(special)[:60]!r} was replaced or removed ({variant})")
        elif before[0] == stat.S_IFREG and now[1:3] != before[1:3]:
            problems.append(f"{special!r} was changed though it is not where the output goes")
    if variant == "folder where a file goes":
        inside = sorted(os.listdir(folder.path(special)))
        if inside != ["marker.txt"]:
            problems.append(f"the folder where the file goes was written into: {inside[:5]}")
    if variant == "FIFO with a reader" and code == 0 and not got:
        problems.append("nothing came through the FIFO")
    if variant == "symlink to a file":
        real = folder.path("in/real.out")
        with open(real) as f:
            changed = f.read() != "old\n"
        if code == 0 and not changed:
            problems.append("the file the symlink names was not written")
        if code != 0 and changed:
            problems.append("the file the symlink names was changed by a failed run")
    if variant == "symlink to a folder":
        inside = sorted(os.listdir(folder.path("in/realdir")))
        if code == 0 and inside == ["marker.txt"]:
            problems.append("nothing was written into the folder the symlink names")
        if code != 0 and inside != ["marker.txt"]:
            problems.append(f"a failed run wrote into the folder the symlink names: {inside[:5]}")
    return {"kind": "paths", "target": f"{name}: {variant}", "mutation": setup, "code": code,
            "problems": problems, "stderr": err, "stdout": out, "argv": argv,
            "setup": f"in/ holds copies of the fixtures named; {setup}"}


# --- signals: runs interrupted, standard output closed -----------------------------------------

# (name, argv, folders whose NAME.json must stand beside NAME.csv)
SIGNAL_COMMANDS = [
    ("series", ["series", "vadd", "--sizes", "2^16,2^17", "--repeat", "50", "--iters", "10", "--device", "host",
                "--output-dir", "d"], ["d"]),
    ("series-spec", ["series", "in/saxpy.toml", "--sizes", "2^10,2^11", "--repeat", "3", "--device", "opencl",
                     "--output-dir", "d", "--format", "extrap,markdown"], ["d"]),
    ("validate", ["validate", "vadd", "--small", "2^14,2^15,2^16", "--large", "2^17", "--repeat", "5", "--iters", "5",
                  "--device", "host", "--output-dir", "d", "--plot-dir", "pl"], ["d"]),
    ("figures", ["figures", "--from", "in/stored", "--out", "f"], []),
    ("report", ["report", "--from", "in/stored", "--out", "r"], []),
    ("run --trace", ["run", "jacobi2d", "-n", "258", "--iters", "300", "--device", "host", "--trace", "t.json"], []),
]
PRINTING_COMMANDS = SIGNAL_COMMANDS[2:] + [
    ("predict", ["predict", "--series", "in/s.series.json", "--target", "4096"], []),
    ("export-extrap", ["export-extrap", "in/s.series.json"], []),
    ("balance", ["balance", "--phi", "0.3", "--rho", "10", "--q", "4", "--r", "1"], []),
    ("predict-cluster", ["predict-cluster", "--trace", "in/t.json", "--grid", "2x2", "--network", "in/n.toml",
                         "--output", "p"], []),
    ("compare-cluster", ["compare-cluster", "in/p.json", "in/m.json", "--output", "c"], []),
    ("run", ["run", "vadd", "--size", "2^16", "--iters", "10", "--device", "host"], []),
    ("maxplus", ["maxplus", "in/triad.toml", "--calibration", "in/cal.json", "--sizes", "1024,2^20"], []),
]
SIGNALS = [("SIGINT", signal.SIGINT), ("SIGTERM", signal.SIGTERM), ("SIGHUP", signal.SIGHUP)]


def signals_case(index, ordinal, seed, binary, folder):
    rng = random.Random(seed * 1_000_003 + index)
    closed = rng.random() < 0.3
    table = PRINTING_COMMANDS if closed else SIGNAL_COMMANDS
    name, command, pairs = table[rng.randrange(len(table))]
    inputs = sorted({c[3:] for c in command if c.startswith("in/")})
    if not folder.put(inputs):
        return {"kind": "signals", "target": name, "status": "skipped"}
    argv = [binary] + command
    folder.settle()
    limit = 60
    if closed:
        how = rng.choice(["at once", "after a line"])
        setup = f"standard output a pipe closed {how}"
        child = Child(argv, folder.case, close_stdout=how)
        code = child.wait(limit)
        expect = {0, 2, 130}
    else:
        sig_name, sig = rng.choice(SIGNALS)
        delay = round(rng.uniform(0.05, 1.5), 3)
        twice = rng.random() < 0.25
        gap = round(rng.uniform(0.0, 0.3), 3)
        setup = f"{sig_name} after {delay} s" + (f", again {gap} s later" if twice else "")
        child = Child(argv, folder.case)
        code = None
        try:
            code = child.p.wait(timeout=delay)
            setup += " (ended before it)"
        except subprocess.TimeoutExpired:
            child.p.send_signal(sig)
            if twice:
                time.sleep(gap)
                child.p.send_signal(sig)  # a no-op once the process has been reaped
        limit = 30
        code = child.wait(limit)
        expect = {0, 2, 130}
    out, err = child.parts["out"], child.parts["err"]
    problems = judge(code, out, err, expect, limit, check_stdout=False)
    finding = None
    if closed and code == -signal.SIGPIPE:
        problems.remove(f"killed by signal {signal.SIGPIPE}")
        finding = "exit 141 (SIGPIPE) with its standard output closed"
    more, after = folder.check()
    problems += more
    for d in pairs:
        stems = {}
        for key in after:
            if key.startswith(d + os.sep) and key not in folder.before and key.rsplit(".", 1)[-1] in ("json", "csv"):
                stems.setdefault(key.rsplit(".", 1)[0], set()).add(key.rsplit(".", 1)[-1])
        lone = sorted(s + "." + next(iter(e)) for s, e in stems.items() if len(e) == 1)
        if lone:
            problems.append(f"a JSON without its CSV or a CSV without its JSON: {lone[:3]}")
    result = {"kind": "signals", "target": name, "mutation": setup, "code": code, "problems": problems,
              "stderr": err, "argv": argv, "setup": f"in/ holds copies of the fixtures named; {setup}"}
    if finding:
        result["finding"] = finding
    return result


# --- files: mutated input files ----------------------------------------------------------------


def files_case(index, ordinal, seed, binary, folder):
    rng = random.Random(seed * 1_000_003 + index)
    name, source, file_name, command = TARGETS[ordinal % len(TARGETS)]
    if source is None or not os.path.exists(source):
        return {"kind": "files", "target": name, "status": "skipped"}
    with open(source, "rb") as f:
        data = f.read()
    mutant, how = mutate(data, rng)
    work = folder.case
    # A spec's kernel file sits beside it.
    for extra in ("saxpy.cl", "wavefront.cl", "fdtd2d.kern", "fdtd2d-reference.toml"):
        src = os.path.join(ROOT, "kernels/examples", extra)
        if os.path.exists(src):
            shutil.copy(src, work)
    path = os.path.join(work, file_name)
    with open(path, "wb") as f:
        f.write(mutant)
    argv = [binary] + [c.replace("{f}", path).replace("{dir}", work) for c in command]
    folder.settle()
    try:
        p = subprocess.run(argv, cwd=work, capture_output=True, timeout=60)
        code, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        code, out, err = "timeout", b"", b""
    problems = judge(code, out, err, {0, 2}, 60, check_stdout=False)
    problems += folder.check()[0]
    result = {"kind": "files", "target": name, "mutation": how, "code": code, "problems": problems,
              "stderr": err, "argv": argv, "setup": f"{file_name}: the mutant"}
    if problems:
        result["mutant"] = mutant[:2000].decode("utf-8", "replace")
    return result


CASES = {"files": files_case, "args": args_case, "paths": paths_case, "signals": signals_case}


def run_case(args):
    index, ordinal, kind, seed, binary, keep = args
    folder = Folder()
    started = time.time()
    try:
        r = CASES[kind](index, ordinal, seed, binary, folder)
        r["index"] = index
        r["seconds"] = time.time() - started
        if r.get("status") == "skipped":
            return r
        r["status"] = "fail" if r["problems"] else "ok"
        if r["status"] == "ok" and not keep:
            for k in ("stderr", "stdout", "argv", "setup", "problems"):
                r.pop(k, None)
        else:
            r["stderr"] = r["stderr"][-600:].decode("utf-8", "replace")
            if any("stdout" in p for p in r["problems"]):
                r["stdout"] = r["stdout"][-600:].decode("utf-8", "replace")
            else:
                r.pop("stdout", None)
            r["command"] = shell(r.pop("argv"))
        if keep:
            r["folder"] = folder.case
        return r
    finally:
        if not keep:
            folder.remove()


def plan(kinds, seed, n):
    """The kind of each case and its number among the cases of its kind."""
    rng = random.Random(f"kinds:{seed}")
    weights = [WEIGHTS[k] for k in kinds]
    seen = dict.fromkeys(kinds, 0)
    for i in range(n):
        kind = kinds[0] if len(kinds) == 1 else rng.choices(kinds, weights)[0]
        yield i, seen[kind], kind
        seen[kind] += 1


def repository_state():
    """The fixtures and kernels, to check that no case wrote beside them."""
    state = {}
    for top in (FIXTURES, os.path.join(ROOT, "kernels")):
        if os.path.isdir(top):
            state.update({os.path.join(top, k): v for k, v in survey(top)[0].items() if v[0] != stat.S_IFDIR})
    return state


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help="which kinds of case, comma-separated (default: all four, mixed)")
    ap.add_argument("--only", type=int, metavar="INDEX",
                    help="run only case INDEX (same --seed and --kinds), print it whole and keep its folder")
    ap.add_argument("--bin", default=os.environ.get("HARNESS_BIN", os.path.join(ROOT, "target/release/harness")))
    ap.add_argument("--report", help="write the summary as JSON here")
    args = ap.parse_args()
    if args.cases < 1 or args.jobs < 1:
        print("error: --cases and --jobs must be at least 1", file=sys.stderr)
        return 2
    kinds = list(dict.fromkeys(k.strip() for k in args.kinds.split(",") if k.strip()))
    if not kinds or any(k not in KINDS for k in kinds):
        print(f"error: --kinds takes some of {','.join(KINDS)}, got {args.kinds!r}", file=sys.stderr)
        return 2
    args.bin = os.path.abspath(args.bin)  # each case runs in a folder of its own
    if not os.access(args.bin, os.X_OK):
        print(f"error: {args.bin} is not an executable (cargo build --release, or give --bin)", file=sys.stderr)
        return 2
    if args.only is not None:
        if args.only < 0:
            print("error: --only takes a case index, 0 or more", file=sys.stderr)
            return 2
        *_, (index, ordinal, kind) = plan(kinds, args.seed, args.only + 1)
        r = run_case((index, ordinal, kind, args.seed, args.bin, True))
        print(json.dumps(r, indent=1, ensure_ascii=False))
        return 1 if r.get("status") == "fail" else 0
    started = time.time()
    repository = repository_state()
    counts, failures, findings, per_kind = {}, [], {}, {}
    jobs = ((i, o, k, args.seed, args.bin, False) for i, o, k in plan(kinds, args.seed, args.cases))
    with mp.Pool(args.jobs) as pool:
        for i, r in enumerate(pool.imap_unordered(run_case, jobs, chunksize=4)):
            key = (r["kind"], r["target"], r["status"], str(r.get("code")))
            counts[key] = counts.get(key, 0) + 1
            pk = per_kind.setdefault(r["kind"], {"ran": 0, "failures": 0, "seconds": 0.0, "exit_codes": {}})
            pk["seconds"] += r.get("seconds", 0.0)
            if r["status"] == "fail":
                failures.append(r)
            if r.get("finding"):
                f = findings.setdefault(r["finding"], {})
                f[r["target"]] = f.get(r["target"], 0) + 1
            if (i + 1) % 5000 == 0:
                print(f"{i + 1} cases, {len(failures)} failures, {time.time() - started:.0f} s", file=sys.stderr)
    state = repository_state()
    changed = sorted(k for k in set(repository) | set(state) if repository.get(k) != state.get(k))
    failures.sort(key=lambda f: f["index"])
    total = sum(counts.values())
    ran = total - sum(v for k, v in counts.items() if k[2] == "skipped")
    by_code = {}
    for (kind, target, status, code), v in counts.items():
        if status == "skipped":
            continue
        by_code[code] = by_code.get(code, 0) + v
        pk = per_kind[kind]
        pk["ran"] += v
        pk["failures"] += v if status == "fail" else 0
        pk["exit_codes"][code] = pk["exit_codes"].get(code, 0) + v

    for pk in per_kind.values():
        pk["seconds"] = round(pk["seconds"], 1)  # summed over the jobs
    problems = {}
    for f in failures:
        for p in f["problems"]:
            what = re.sub(r"[:(].*", "", p).strip()
            problems.setdefault(f"{f['kind']}: {what}", []).append(f)

    def count(word):
        return sum(1 for f in failures if any(word in p for p in f["problems"]))

    summary = {
        "cases": total,
        "ran": ran,
        "seconds": round(time.time() - started, 1),
        "kinds": kinds,
        "exit_codes": by_code,
        "failures": len(failures),
        "signals": count("signal"),
        "panics": sum(1 for f in failures if "panic" in f["problems"]),
        "partial_files": sum(1 for f in failures if any("temporaries" in p or "partial" in p or "without its" in p
                                                        for p in f["problems"])),
        "hangs": count("ran past"),
        "outside_writes": count("outside the case folder") + (1 if changed else 0),
        "repository_changed": changed[:10],
        "per_kind": per_kind,
        "per_target": {t: sum(v for k, v in counts.items() if k[0] == "files" and k[1] == t and k[2] != "skipped")
                       for t, *_ in TARGETS},
        "findings": findings,
        "problems": {k: len(v) for k, v in sorted(problems.items())},
        "first_failures": [v[0] for _, v in sorted(problems.items())][:20],
        "seed": args.seed,
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "first_failures"}, indent=1, ensure_ascii=False))
    for f in summary["first_failures"]:
        print(f"FAIL {f['kind']} {f['target']} ({f['mutation'][:200]}): {f['problems']}\n"
              f"  stderr: {f['stderr'][-300:]!r}\n"
              f"  setup: {f['setup'][:300]}\n"
              f"  command: {f['command'][:600]}\n"
              f"  again: scripts/fuzz-cli.py --seed {args.seed} --kinds {','.join(kinds)} --only {f['index']} --bin {args.bin}",
              file=sys.stderr)
    if changed:
        print(f"FAIL the repository's fixtures or kernels changed: {changed[:10]}", file=sys.stderr)
    if args.report:
        with open(args.report + ".tmp", "w") as fh:
            json.dump(summary, fh, indent=1, ensure_ascii=False)
        os.replace(args.report + ".tmp", args.report)
    return 1 if failures or changed else 0


if __name__ == "__main__":
    sys.exit(main())
