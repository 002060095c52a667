#!/usr/bin/env bash
# The install-repromatrix action's step (action.yml says what and why). Reads SOURCE, or
# PLAN and PLAN_SHA256, from the environment; run from the job's workspace.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -n "${PLAN:-}" ]; then
  if [ -n "${SOURCE:-}" ]; then
    echo "::error::install-repromatrix: give source or plan, not both"
    exit 1
  fi
  if ! [[ "${PLAN_SHA256:-}" =~ ^[0-9a-f]{64}$ ]]; then
    echo "::error::install-repromatrix: plan-sha256 is not a sha256 (the trusted job's output); nothing installed"
    exit 1
  fi
  found=$(bash "$here/digest.sh" "$PLAN")
  if [ "$found" != "$PLAN_SHA256" ]; then
    echo "::error::install-repromatrix: $PLAN has digest $found, not $PLAN_SHA256 as the job that wrote it said; nothing installed"
    exit 1
  fi
  wheels=("$PLAN"/tool/*.whl)
  if [ "${#wheels[@]}" -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
    echo "::error::install-repromatrix: $PLAN/tool holds ${#wheels[@]} wheels, not one; nothing installed"
    exit 1
  fi
  requirement=${wheels[0]}
elif [ -n "${SOURCE:-}" ]; then
  requirement=$SOURCE
else
  echo "::error::install-repromatrix: give source, or plan and plan-sha256"
  exit 1
fi
command -v uv >/dev/null || python3 -m pip install --quiet --target "$RUNNER_TEMP/uv" uv
export PATH="$PATH:$RUNNER_TEMP/uv/bin"
uv venv --quiet --python python3 .venv
uv pip install --quiet --python .venv "$requirement"
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$PWD/.venv/bin" >> "$GITHUB_PATH"
fi
