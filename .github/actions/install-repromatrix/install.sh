#!/usr/bin/env bash
# The install-repromatrix action's step (action.yml says what and why). Reads SOURCE, or
# PLAN and PLAN_SHA256, from the environment; run from the job's workspace.
#
# Dependencies come from a hashed lock (--require-hashes), then repromatrix itself with
# --no-deps: the plan's tool/requirements.txt, else the repository's
# .github/repromatrix/requirements.txt (repromatrix init writes it; repromatrix's own
# repository keeps its own, nox -s lock). repromatrix itself is SOURCE when given, else
# the wheel beside that lock, checked against its SHA256SUMS.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shipped=.github/repromatrix

fail() {
  echo "::error::install-repromatrix: $1"
  exit 1
}

# The one wheel of FOLDER, as `wheel`, checked against its line in FOLDER/SHA256SUMS.
checked_wheel() {
  local folder=$1 wheels expected
  wheels=("$folder"/repromatrix-*.whl)
  if [ "${#wheels[@]}" -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
    fail "$folder holds ${#wheels[@]} repromatrix wheels, not one; nothing installed"
  fi
  wheel=${wheels[0]}
  expected=$(awk -v name="$(basename "$wheel")" '$2 == name {print $1}' "$folder/SHA256SUMS" 2>/dev/null || true)
  if [ -z "$expected" ] || [ "$(sha256sum "$wheel" | cut -d' ' -f1)" != "$expected" ]; then
    fail "$wheel is not what $folder/SHA256SUMS says (repromatrix init --upgrade writes both); nothing installed"
  fi
}

lock=""
if [ -n "${PLAN:-}" ]; then
  if [ -n "${SOURCE:-}" ]; then
    fail "give source or plan, not both"
  fi
  if ! [[ "${PLAN_SHA256:-}" =~ ^[0-9a-f]{64}$ ]]; then
    fail "plan-sha256 is not a sha256 (the trusted job's output); nothing installed"
  fi
  found=$(bash "$here/digest.sh" "$PLAN")
  if [ "$found" != "$PLAN_SHA256" ]; then
    fail "$PLAN has digest $found, not $PLAN_SHA256 as the job that wrote it said; nothing installed"
  fi
  [ -f "$PLAN/tool/requirements.txt" ] || fail "$PLAN/tool holds no requirements.txt (the hashed lock of the wheel's dependencies); nothing installed"
  checked_wheel "$PLAN/tool"
  requirement=$wheel
  lock=$PLAN/tool/requirements.txt
elif [ -n "${SOURCE:-}" ]; then
  requirement=$SOURCE
  if [ -f "$shipped/requirements.txt" ]; then lock=$shipped/requirements.txt; fi
elif [ -f "$shipped/requirements.txt" ]; then
  checked_wheel "$shipped"
  requirement=$wheel
  lock=$shipped/requirements.txt
else
  fail "nothing to install: $shipped/ (repromatrix init writes it: a wheel and its hashed lock) is not in this repository, and no source was given (the REPROMATRIX_SOURCE variable); see docs/setup.md of repromatrix"
fi

if ! command -v uv >/dev/null; then
  # uv itself from the lock's pin and hashes where there is one.
  if [ -n "$lock" ]; then
    awk '/^uv==/ {keep = 1; print; next} keep && /^ +--hash/ {print; next} {keep = 0}' "$lock" > "$RUNNER_TEMP/uv.txt"
    [ -s "$RUNNER_TEMP/uv.txt" ] || fail "$lock pins no uv, and the runner has none on PATH; nothing installed"
    python3 -m pip install --quiet --require-hashes --no-deps --target "$RUNNER_TEMP/uv" -r "$RUNNER_TEMP/uv.txt"
  else
    python3 -m pip install --quiet --target "$RUNNER_TEMP/uv" uv
  fi
fi
export PATH="$PATH:$RUNNER_TEMP/uv/bin"
uv venv --quiet --python python3 .venv
if [ -n "$lock" ]; then
  uv pip install --quiet --python .venv --require-hashes -r "$lock"
  # Built, where it is a source, with the lock's build backend: nothing resolved.
  uv pip install --quiet --python .venv --no-deps --no-build-isolation "$requirement"
  if ! check=$(uv pip check --python .venv 2>&1); then
    fail "$requirement needs what $lock does not hold ($(echo "$check" | grep -v '^Using\|^Checked\|^Found' | head -1 | sed 's/^ *//')): refresh the lock (repromatrix init --upgrade, with that repromatrix)"
  fi
else
  echo "::warning::install-repromatrix: no hashed lock ($shipped/requirements.txt): the dependencies of $requirement are resolved now, unpinned (repromatrix init --upgrade writes the lock)"
  uv pip install --quiet --python .venv "$requirement"
fi
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$PWD/.venv/bin" >> "$GITHUB_PATH"
fi
