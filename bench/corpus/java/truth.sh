#!/usr/bin/env bash
# Regenerate tests/fixtures/corpus/truth/NAME.json for a Java repository of the corpus.
#   bench/corpus/java/truth.sh BUNDLE NAME      (jsoup: JSPECIFY_SRC=a jspecify checkout)
# Truth.java (javac's parser) lists the tests; crosscheck.sh compares them with the JUnit
# Platform's own discovery on the test files that compile offline, and its count of method
# identifiers becomes runner_count. A difference between the two stops the script.
set -euo pipefail
bundle=$(realpath "$1") name=$2
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../../tests/fixtures/corpus/truth/$name.json"
case $name in
jsoup) repo=github.com/jhy/jsoup license=MIT
  notes=("src/test/java11 is a test root of the JDK 11+ profile (build-helper add-test-source); *IT classes run under failsafe, the rest under surefire"
    "HttpClientConnectIT and HttpClientSessionIT extend ConnectIT and SessionIT: JUnit runs the inherited tests again in the subclass (three overrides without @Test disable some); each test counts once, where it is written") ;;
gson) repo=github.com/google/gson license=Apache-2.0
  notes=("runner_count covers the gson module only; extras, proto, test-jpms, test-shrinker and test-graal-native-image (JUnit 5) are read by Truth.java but not cross-checked"
    "JUnit 4 Parameterized classes list one identifier per parameter set, and guava-testlib suites (suite() methods) run guava's tester methods, which are not defined in this repository: both only add to runner_count") ;;
javapoet) repo=github.com/square/javapoet license=Apache-2.0
  notes=("AbstractTypesTest's tests run in both subclasses, TypesTest and TypesEclipseTest; they count once, where they are written"
    "the test files using Google's compile-testing (not packaged in Debian) are not cross-checked") ;;
*) echo "unknown corpus name $name" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone --quiet --bare "$bundle" "$tmp/repo.git"
git -C "$tmp/repo.git" rev-parse HEAD >"$tmp/repo.git/shallow" # the bundle has no parents
read -r commit committed < <(git -C "$tmp/repo.git" log -1 --format='%H %cs')
mkdir "$tmp/src"
git -C "$tmp/repo.git" archive HEAD | tar -x -C "$tmp/src"

"$here/crosscheck.sh" "$tmp/src" "$name" "$tmp/work" | tee "$tmp/check" >&2
listed=$(sed -n 's/^JUnit discovery: \([0-9]*\) .*/\1/p' "$tmp/check")
left=$(sed -n 's/^left out (do not compile here): //p' "$tmp/check")
runner="JUnit Platform discovery (bench/corpus/java/Discover.java; Debian junit5 \
$(dpkg-query -W -f='${Version}' junit5), junit4 $(dpkg-query -W -f='${Version}' junit4); no test run), \
equal to Truth.java on the compiled files"
java "$here/Truth.java" "$tmp/src" "$name" "$repo" "$commit" "$committed" "$license" \
  "$listed" "$runner" \
  "runner_count: method-level test identifiers JUnit discovers (a parameterized or dynamic test is one container; inherited tests once per class), over the test files that compile offline against Debian's older JUnit and libraries; left out: $left" \
  "${notes[@]}" >"$out"
echo "$out: $(grep -c '"file"' "$out") tests"
