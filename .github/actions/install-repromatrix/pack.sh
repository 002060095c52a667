#!/usr/bin/env bash
# The tool folder of a plan (issue-repro.yml's parse job): repromatrix's wheel, its
# SHA256SUMS and the hashed lock of its dependencies, which the jobs after parse
# install from the plan artifact (install.sh, plan mode) with --require-hashes. The
# wheel is the repository's shipped one (.github/repromatrix/, checked against its
# SHA256SUMS) or, where SOURCE names another, built here with pip (no dependencies).
# Usage: pack.sh DIR (run from the job's workspace); prints path=<the wheel>.
set -euo pipefail
out=$1
shipped=.github/repromatrix
if [ ! -f "$shipped/requirements.txt" ]; then
  echo "::error::install-repromatrix: $shipped/requirements.txt (the hashed lock the jobs with a token install from) is not in this repository: run repromatrix init --upgrade and commit it"
  exit 1
fi
mkdir -p "$out"
if [ -z "${SOURCE:-}" ]; then
  wheels=("$shipped"/repromatrix-*.whl)
  cp "${wheels[@]}" "$shipped/SHA256SUMS" "$out/"
else
  python3 -m pip wheel --quiet --no-deps --wheel-dir "$out" "$SOURCE"
  (cd "$out" && sha256sum repromatrix-*.whl > SHA256SUMS)
fi
cp "$shipped/requirements.txt" "$out/requirements.txt"
wheels=("$out"/repromatrix-*.whl)
if [ "${#wheels[@]}" -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
  echo "::error::install-repromatrix: $out holds ${#wheels[@]} repromatrix wheels, not one"
  exit 1
fi
echo "path=${wheels[0]}"
