#!/usr/bin/env bash
# What Debian's TestNG 6.9.12 makes tests of the probe classes (ADR 0005's TestNG rows):
# a class-level @Test takes public methods, static ones too, not those returning a
# value, not a nested class's nor protected ones, and reaches a subclass; a class's
# @Test(enabled = false) disables nothing. Prints Lister.java's LISTED lines.
#   bench/corpus/jvm/rules/testng_rules.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp=$(printf '/usr/share/java/%s.jar:' testng jcommander bsh snakeyaml)
javac -nowarn -d "$tmp" -cp "$cp" "$here"/probe/*.java "$here/../Lister.java"
java -cp "$tmp:$cp" org.testng.TestNG -listener Lister -d "$tmp/output" \
  -testclass 'probe.DisabledClassTest,probe.BaseTest,probe.SubTest,probe.BaseTest$Nested' |
  grep '^LISTED' | sort
