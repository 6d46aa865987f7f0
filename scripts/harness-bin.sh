# Sourced by the scripts here: harness_bin [GIVEN] prints the binary to run (GIVEN, else
# target/release/harness, else target/debug/harness) or fails with one error line.
harness_bin() {
  local h=${1:-}
  if [ -z "$h" ]; then
    for h in target/release/harness target/debug/harness; do
      [ -x "$h" ] && break
    done
  fi
  [ -x "$h" ] || { echo "error: no harness binary: build it with cargo build --release" >&2; return 2; }
  echo "$h"
}
