#!/usr/bin/env bash
# Cross-check Truth.java against the JUnit Platform's own discovery (Discover.java).
#   bench/corpus/java/crosscheck.sh DIR NAME WORK
# DIR: the repository's files; WORK: a scratch directory. Compiles the main sources, then
# the test sources against Debian's JUnit 5.9 / JUnit 4.13 and test libraries, leaving out
# every test file that does not compile with them (their versions are older than the
# project's; the files left out are printed), and compares, per "Class#method", what JUnit
# discovers with what Truth.java lists for the compiled files. Prints the counts; exits 1
# on a difference. jsoup also needs JSPECIFY_SRC: a checkout of jspecify/jspecify.
set -euo pipefail
dir=$(realpath "$1") name=$2 work=$(realpath -m "$3")
here=$(cd "$(dirname "$0")" && pwd)
J=/usr/share/java
apt-get install -y junit5 junit4 libguava-testlib-java libtruth-java libgoogle-gson-java \
  libre2j-java libnetty-java liberror-prone-java libjimfs-java libmockito-java libecj-java >/dev/null
rm -rf "$work" && mkdir -p "$work/main" "$work/test" "$work/extra"
cp=$J/junit-platform-console-standalone.jar:$J/junit4.jar:$J/hamcrest-core.jar:$J/truth.jar:$J/guava.jar
case $name in
jsoup)
  # jspecify's four annotations, and JUnit 5.13's ArgumentsProvider/ParameterDeclarations
  # shapes (MultiLocaleExtension implements them) ahead of Debian's 5.9 on the class path.
  javac -nowarn -d "$work/extra" $(find "$JSPECIFY_SRC/src/main/java" -name '*.java' ! -name module-info.java)
  mkdir -p "$work/shim/org/junit/jupiter/params/provider" "$work/shim/org/junit/jupiter/params/support"
  printf '%s\n' 'package org.junit.jupiter.params.support;' 'public interface ParameterDeclarations {}' \
    >"$work/shim/org/junit/jupiter/params/support/ParameterDeclarations.java"
  printf '%s\n' 'package org.junit.jupiter.params.provider;' 'import java.util.stream.Stream;' \
    'import org.junit.jupiter.api.extension.ExtensionContext;' \
    'import org.junit.jupiter.params.support.ParameterDeclarations;' \
    'public interface ArgumentsProvider {' \
    '  default Stream<? extends Arguments> provideArguments(ExtensionContext c) throws Exception { throw new UnsupportedOperationException(); }' \
    '  default Stream<? extends Arguments> provideArguments(ParameterDeclarations p, ExtensionContext c) throws Exception { return provideArguments(c); }' \
    '}' >"$work/shim/org/junit/jupiter/params/provider/ArgumentsProvider.java"
  javac -nowarn -d "$work/extra" -cp "$cp" $(find "$work/shim" -name '*.java')
  netty=$(ls $J/netty-*.jar | grep -v -- '-[0-9]' | tr '\n' :)
  cp=$work/extra:$cp:$netty$J/gson.jar:$J/re2j.jar
  main=(src/main/java src/main/java11) tests=(src/test/java src/test/java11) ;;
gson)
  cp=$cp:$J/error_prone_annotations.jar:$J/guava-testlib.jar
  main=(gson/src/main/java gson/src/main/java-templates) tests=(gson/src/test/java) ;;
javapoet)
  cp=$cp:$J/jimfs.jar:$J/mockito-core.jar:$J/ecj.jar
  main=(src/main/java) tests=(src/test/java) ;;
*) echo "no cross-check set up for $name" >&2; exit 2 ;;
esac
cd "$dir"
javac -nowarn -Xlint:none -proc:none -cp "$cp" -d "$work/main" \
  $(find "${main[@]}" -name '*.java' ! -name module-info.java)
cp=$work/main:$cp
find "${tests[@]}" -name '*.java' | sort >"$work/sources"
: >"$work/left-out"
# Leave out the files javac names in errors until the rest compiles (a file that only
# fails because another was left out is named in the next round).
while :; do
  rm -rf "$work/test" && mkdir "$work/test"
  bad=$(javac -nowarn -Xlint:none -proc:none -cp "$cp" -d "$work/test" \
    $(grep -vxFf "$work/left-out" "$work/sources") 2>&1 | grep -oE '^[^: ]+\.java' | sort -u || true)
  [ -z "$bad" ] && break
  echo "$bad" >>"$work/left-out"
done
java -cp "$work/test:$cp" "$here/Discover.java" "$work/test" 2>"$work/counts" | sort -u >"$work/discovered"
# Truth.java's tests in the compiled roots, less the files left out.
java "$here/Truth.java" --list "$dir" | awk -v roots="${tests[*]}" '
  NR == FNR { skip[$0] = 1; next }
  { for (i = 1; i <= n; i++) if (index($2, r[i] "/") == 1 && !($2 in skip)) print $1 }
  BEGIN { n = split(roots, r, " ") }' "$work/left-out" - | sort -u >"$work/truth"
echo "left out (do not compile here): $(wc -l <"$work/left-out") of $(wc -l <"$work/sources") files"
echo "JUnit discovery: $(cat "$work/counts")"
echo "distinct Class#method: truth $(wc -l <"$work/truth"), JUnit $(wc -l <"$work/discovered")"
diff "$work/truth" "$work/discovered" && echo "equal"
