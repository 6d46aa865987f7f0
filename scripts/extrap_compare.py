#!/usr/bin/env python3
"""Extra-P beside the harness on the same data.

For each result of `harness validate` given on the command line, fit Extra-P's default
single-parameter modeler to the validation's small series (the medians of the very runs the
harness's fits used: `Measure.MEDIAN` through Extra-P's Python API, because its command line
fits means for one-parameter data), predict the large sizes the validation measured, and put
the prediction beside the harness's `paper`, `windowed` and `calibrated` predictions of the
total. Works on `harness validate` results and on the cases `harness validate-suite` keeps
under <output-dir>/<device>.suite/.

Run it through scripts/extrap-compare.sh, which installs Extra-P from PyPI in a virtual
environment (Extra-P is not a dependency of the harness).

usage: extrap_compare.py HARNESS VALIDATION.json... [--csv OUT.csv]
"""
import csv
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from extrap.entities.measurement import Measure
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.modelers.model_generator import ModelGenerator


def extrap_predictions(harness: str, validation: Path, sizes):
    """Extra-P's prediction of the total at each size, and its model as text."""
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "series.extrap.txt"
        # The harness's own exporter writes the small series in Extra-P's text format.
        subprocess.run(
            [harness, "export-extrap", str(validation), "--output", str(text)],
            check=True,
            capture_output=True,
        )
        experiment = TextFileReader().read_experiment(text)
    generator = ModelGenerator(experiment, use_measure=Measure.MEDIAN)
    generator.model_all()
    for (callpath, _metric), model in generator.models.items():
        if callpath.name == "total":
            function = model.hypothesis.function
            return [float(function.evaluate(s)) for s in sizes], str(function)
    raise SystemExit(f"error: {validation}: no region `total` in the Extra-P model")


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    harness = argv[1]
    out_csv = None
    files = []
    args = iter(argv[2:])
    for a in args:
        if a == "--csv":
            out_csv = next(args, None)
            if out_csv is None:
                print("error: --csv needs a file", file=sys.stderr)
                return 2
        elif not Path(a).is_file():
            print(f"error: no validation file {a}", file=sys.stderr)
            return 2
        else:
            files.append(Path(a))
    rows = []
    for f in files:
        v = json.loads(f.read_text())
        workload = v["series"]["workload"]
        layout = v["series"].get("layout")
        name = f"{workload}-{layout}" if layout else workload
        large = [(p["size"], p["total"]["median_seconds"]) for p in v["large"]]
        predicted, model = extrap_predictions(harness, f, [s for s, _ in large])
        ours = {
            (r["variant"], r["size"]): r["predicted_seconds"]
            for r in v["rows"]
            if r["phase"] == "total"
        }
        for (size, measured), xp in zip(large, predicted):
            row = {"case": name, "size": size, "measured_s": measured, "extrap_model": model}
            for tool, value in [
                ("paper", ours.get(("paper", size))),
                ("windowed", ours.get(("windowed", size))),
                ("calibrated", ours.get(("calibrated", size))),
                ("extrap", xp),
            ]:
                row[f"{tool}_s"] = value
                row[f"{tool}_err_pct"] = (
                    None if value is None else abs(value - measured) / measured * 100.0
                )
            rows.append(row)

    print(f"{'case':22} {'N':>9} {'measured s':>11} {'paper %':>8} {'windowed %':>11} {'calibrated %':>13} {'Extra-P %':>10}  Extra-P model")
    fmt = lambda e: "-" if e is None else f"{e:.1f}"
    for r in rows:
        print(
            f"{r['case']:22} {r['size']:>9} {r['measured_s']:>11.4e} {fmt(r['paper_err_pct']):>8} "
            f"{fmt(r['windowed_err_pct']):>11} {fmt(r['calibrated_err_pct']):>13} "
            f"{fmt(r['extrap_err_pct']):>10}  {r['extrap_model']}"
        )
    for tool in ["paper", "windowed", "calibrated", "extrap"]:
        errs = [r[f"{tool}_err_pct"] for r in rows if r[f"{tool}_err_pct"] is not None]
        if errs:
            print(
                f"{tool:9} |error|: median {statistics.median(errs):.1f} %, max {max(errs):.1f} % "
                f"over {len(errs)} of {len(rows)} cases"
            )
    if out_csv:
        Path(out_csv).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(out_csv + ".tmp")
        with tmp.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
        tmp.replace(out_csv)
        print(f"wrote {out_csv}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
