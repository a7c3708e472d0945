#!/usr/bin/env bash
# Regenerate tests/fixtures/corpus/truth/NAME.json for a Go repository of the corpus.
#   bench/corpus/go/truth.sh BUNDLE NAME
# Reads the bundle's commit with truth.go (Go's own parser). Then cross-checks the test
# functions against `go test -list . ./...`, run in GOPATH mode (no module download: the
# dependencies come from Debian's golang-*-dev packages, and from DEPS_GOPATH, a GOPATH
# holding what Debian lacks or has too old, e.g. spf13/pflag v1.0.9 for cobra). When the
# tests build, runner_count is go test's count and the two lists must be equal; when they
# do not build (gin's dependencies are not packaged), runner_count is truth.go's count of
# the test functions go test would list, and the truth file says so.
set -euo pipefail
bundle=$(realpath "$1") name=$2
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../../tests/fixtures/corpus/truth/$name.json"
case $name in
cobra) repo=github.com/spf13/cobra license=Apache-2.0
  debs="golang-github-spf13-pflag-dev golang-github-cpuguy83-go-md2man-v2-dev golang-gopkg-yaml.v3-dev golang-github-inconshreveable-mousetrap-dev" ;;
testify) repo=github.com/stretchr/testify license=MIT
  debs="golang-github-stretchr-objx-dev golang-gopkg-yaml.v3-dev" ;;
gin) repo=github.com/gin-gonic/gin license=MIT debs="" ;;
*) echo "unknown corpus name $name" >&2; exit 2 ;;
esac
command -v go >/dev/null || apt-get install -y golang-go >/dev/null
[ -z "$debs" ] || apt-get install -y $debs >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone --quiet --bare "$bundle" "$tmp/repo.git"
git -C "$tmp/repo.git" rev-parse HEAD >"$tmp/repo.git/shallow" # the bundle has no parents
read -r commit committed < <(git -C "$tmp/repo.git" log -1 --format='%H %cs')
module=$(git -C "$tmp/repo.git" show HEAD:go.mod | awk '$1 == "module" {print $2; exit}')
src="$tmp/gopath/src/$module"
mkdir -p "$src"
git -C "$tmp/repo.git" archive HEAD | tar -x -C "$src"
# cobra imports yaml v3 under its new path, go.yaml.in/yaml/v3: the same code as Debian's
# gopkg.in/yaml.v3, which has no import comment, so a link serves it in GOPATH mode.
mkdir -p "$tmp/gopath/src/go.yaml.in/yaml"
ln -s /usr/share/gocode/src/gopkg.in/yaml.v3 "$tmp/gopath/src/go.yaml.in/yaml/v3"

go run "$here/truth.go" -list "$src" >"$tmp/funcs"
runner=(-runner-count -1)
if (cd "$src" && GO111MODULE=off GOFLAGS= GOPROXY=off \
  GOPATH="$tmp/gopath:${DEPS_GOPATH:+$DEPS_GOPATH:}/usr/share/gocode" \
  go test -list . ./... >"$tmp/list" 2>&1); then
  # go test -list prints a package's names, then its "ok  import/path" line.
  awk -v m="$module" '/^ok/ { p = $2; sub("^" m "/?", "", p); if (p == "") p = "."
      for (i = 0; i < n; i++) print p " " names[i]; n = 0; next }
    /^Test/ { names[n++] = $1 }' "$tmp/list" | sort >"$tmp/listed"
  diff "$tmp/funcs" "$tmp/listed" >&2 || { echo "truth.go and go test -list differ" >&2; exit 1; }
  runner=(-runner-count "$(wc -l <"$tmp/listed")"
    -runner-tool "go test -list . ./... ($(go version | cut -d' ' -f3), GOPATH mode, dependencies from Debian packages and DEPS_GOPATH), equal to truth.go's test functions")
else
  echo "go test -list failed; runner_count from truth.go" >&2
fi
go run "$here/truth.go" -name "$name" -repository "$repo" -commit "$commit" \
  -committed "$committed" -license "$license" "${runner[@]}" "$src" >"$out"
echo "$out: $(grep -c '"file"' "$out") tests"
