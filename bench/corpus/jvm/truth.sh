#!/usr/bin/env bash
# Regenerate tests/fixtures/corpus/truth/NAME.json for a Kotlin or TestNG repository.
#   bench/corpus/jvm/truth.sh BUNDLE NAME
# No kotlinc and no Gradle repository here: truth.py, an independent parse, lists the
# tests; TestNG's own discovery checks the Java ones (testng_crosscheck.sh).
set -euo pipefail
bundle=$1 name=$2
here=$(cd "$(dirname "$0")" && pwd)
case $name in
kotlinpoet) repo=github.com/square/kotlinpoet
  notes=("JUnit 4 and kotlin.test in Kotlin (jvmTest source sets), one JUnit 4 file in Java; checked by hand: TypeSpecTest.kt (backticked names holding 'class'), FileSpecTest.kt, the Java file") ;;
turbine) repo=github.com/cashapp/turbine
  notes=("kotlin.test in Kotlin Multiplatform source sets (commonTest, jvmTest); checked by hand: every file") ;;
hoplite) repo=github.com/sksamuel/hoplite
  notes=("kotest FunSpec, StringSpec (init blocks), BehaviorSpec, DescribeSpec, WordSpec, FreeSpec, AnnotationSpec; checked by hand: EnumDecoderTest.kt (BehaviorSpec), EnvVarPreprocessorTest.kt (a data class named Test before init), a DescribeSpec and a WordSpec file") ;;
avro4k) repo=github.com/avro-kotlin/avro4k
  notes=("kotest FunSpec, StringSpec, WordSpec, and JUnit 5 in kotlin-generator; checked by hand: ArraySchemaTest.kt (WordSpec), a StringSpec file, KotlinGeneratorTest.kt (@Disabled)") ;;
openapi-processor) repo=github.com/openapi-processor/openapi-processor-base
  notes=("kotest StringSpec and FreeSpec with withData (once where written) and .config(false); its Groovy Spock tests are not read by clonegate and not in this truth; checked by hand: MappedDataTypeSpec.kt, BeanValidationSupportedSpec.kt (withData), AntlrParserSpec.kt (.config(false)), PathSpec.kt (tags only: active)") ;;
klaxon) repo=github.com/cbeust/klaxon
  notes=("TestNG in Kotlin, many classes annotated @Test: their public functions are tests, less overrides returning a value (provideParser(): Parser, which TestNG ignores) and functions of object expressions; checked by hand: BindingAdapterTest.kt, KlaxonTest.kt, PropertyStrategyTest.kt") ;;
failsafe) repo=github.com/failsafe-lib/failsafe
  notes=("TestNG in Java, classes annotated @Test; core/ checked equal to TestNG 6.9.12's own discovery (testng_crosscheck.sh: 304 methods); modules/ (okhttp, retrofit: wiremock is not in Debian) not cross-checked") ;;
typetools) repo=github.com/jhalterman/typetools
  notes=("TestNG in Java, @Factory and class-level @Test; checked equal to TestNG 6.9.12's own discovery (testng_crosscheck.sh: 60 methods; its 2 enabled = false tests are not listed by TestNG and are skipped here)") ;;
*) echo "unknown corpus name $name" >&2; exit 2 ;;
esac
python3 "$here/truth.py" "$bundle" "$name" "$repo" Apache-2.0 "${notes[@]}"
