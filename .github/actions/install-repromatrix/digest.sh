#!/usr/bin/env bash
# The digest of a folder: the sha256 of every regular file's path and sha256, in byte
# order of the paths. A link or anything else that is not a file or a folder fails it
# (a link could point the install anywhere). Prints 64 hex digits.
set -euo pipefail
cd "$1"
odd=$(find . ! -type f ! -type d -print -quit)
if [ -n "$odd" ]; then
  echo "digest.sh: $1 holds $odd, which is not a regular file" >&2
  exit 1
fi
find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum | sha256sum | cut -d' ' -f1
