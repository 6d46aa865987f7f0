#!/usr/bin/env bash
# Run 57 of the validation suite, the host only: how every file in this folder was made (2 vCPUs
# of an Intel Xeon, model 207, 260 MiB L3 as the VM reports it). The host is calibrated right
# before its suite. The first run whose calibration's transfer sweep reaches 4× the last-level
# cache (docs/models.md §2.4, "Transfer"), code of commit cca4370: its out-of-sample check on
# the host (PoCL's calibration and suite, 21 minutes or more, did not fit in the session).
set -euo pipefail
cd "$(dirname "$0")/../.."
D=results/suite-2026-11-27g
H=./target/release/harness
HOST=host-intel-r-xeon-r-processor
echo "start $(date +%s)"
$H calibrate --device host --output-dir $D/calibrations > $D/calibrate-host.log 2>&1
$H validate-suite --device host --calibration $D/calibrations/$HOST.json --output-dir $D > $D/suite-host.log 2>&1
echo "host $(date +%s)"
scripts/extrap-compare.sh $D/$HOST.suite/*.json --csv $D/extrap-suite-$HOST.csv > $D/extrap-$HOST.log 2>&1
echo "done $(date +%s)"
