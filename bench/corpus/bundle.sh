#!/usr/bin/env bash
# Make tests/fixtures/corpus/NAME.bundle: one commit (the default branch's head) of a
# repository, unmodified, as a depth-1 bundle.
#   bench/corpus/bundle.sh SOURCE NAME
# SOURCE: a clone URL or a local git directory (a mirror). Prints the commit and its date.
set -euo pipefail
source=$1 name=$2
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../tests/fixtures/corpus/$name.bundle"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -d "$source" ] && source="file://$(cd "$source" && pwd)"
git clone --quiet --bare --depth 1 --single-branch "$source" "$tmp/repo.git"
git -C "$tmp/repo.git" bundle create "$out" HEAD 2>/dev/null
git -C "$tmp/repo.git" log -1 --format='%H %cs'
