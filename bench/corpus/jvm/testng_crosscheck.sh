#!/usr/bin/env bash
# Check a TestNG repository's truth against TestNG's own discovery (Debian's testng
# 6.9.12, as root: apt-get install testng libmockito-java).
#   bench/corpus/jvm/testng_crosscheck.sh BUNDLE NAME
# Compiles the main and test sources offline, then runs TestNG over every compiled test
# class with Lister.java as a method interceptor: it prints each method TestNG would
# run and runs none. concurrentunit (not in Debian) is a compile-only stub.
set -euo pipefail
bundle=$(realpath "$1") name=$2
here=$(cd "$(dirname "$0")" && pwd)
truth="$here/../../../tests/fixtures/corpus/truth/$name.json"
case $name in
typetools) sources=(src/main/java src/test/java) prefixes=(src/) ;;
failsafe) sources=(core/src/main/java core/src/test/java) prefixes=(core/) ;;
*) echo "no TestNG cross-check for $name" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone --quiet --bare "$bundle" "$tmp/repo.git"
git -C "$tmp/repo.git" rev-parse HEAD >"$tmp/repo.git/shallow"
mkdir "$tmp/src" "$tmp/classes"
git -C "$tmp/repo.git" archive HEAD | tar -x -C "$tmp/src"
jars=(testng jcommander bsh snakeyaml mockito-core byte-buddy objenesis)
cp=$(printf '/usr/share/java/%s.jar:' "${jars[@]}")
(cd "$tmp/src" && find "${sources[@]}" -name '*.java') | sed "s#^#$tmp/src/#" >"$tmp/files"
find "$here/stubs" -name '*.java' >>"$tmp/files"
javac -nowarn -d "$tmp/classes" -cp "$cp" "$here/Lister.java" @"$tmp/files" 2>&1 | grep -A2 ': error:' >&2 || true
classes=$(cd "$tmp/classes" && find . -name '*.class' ! -name '*$*' ! -path './net/jodah/concurrentunit/*' ! -name Lister.class |
  sed 's#^\./##; s#\.class$##; s#/#.#g' | paste -sd,)
java -cp "$tmp/classes:$cp" org.testng.TestNG -listener Lister -testclass "$classes" \
  -d "$tmp/output" >"$tmp/listing"
python3 "$here/testng_compare.py" "$tmp/listing" "$truth" "${prefixes[@]}"
