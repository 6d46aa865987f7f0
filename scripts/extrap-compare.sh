#!/usr/bin/env bash
# Extra-P beside the harness on the same data: installs Extra-P 4.2.5 from PyPI in a virtual
# environment (not a dependency of the harness), then fits it to the small series of each
# `harness validate` result (or `harness validate-suite` case) given and prints its predictions
# of the large sizes beside the harness's `paper`, `windowed` and `calibrated` ones
# (scripts/extrap_compare.py says how).
#
# usage: scripts/extrap-compare.sh VALIDATION.json... [--csv OUT.csv]
#   e.g. scripts/extrap-compare.sh results/<device>.suite/*.json --csv results/extrap.csv
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
for a in "$@"; do
  case "$a" in
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    --csv) ;;
    -*) echo "error: unknown option $a (see --help)" >&2; exit 2 ;;
  esac
done
HARNESS=${HARNESS:-target/release/harness}
[ -x "$HARNESS" ] || { echo "error: $HARNESS not found: cargo build --release first (or set HARNESS)" >&2; exit 2; }
VENV=${EXTRAP_VENV:-target/extrap-venv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "extrap==4.2.5"
fi
exec "$VENV/bin/python" scripts/extrap_compare.py "$HARNESS" "$@"
