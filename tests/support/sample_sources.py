"""Test files that more than one test module reads: a PHPUnit class, a JUnit test in
Java, and a kotest FunSpec with every status (its tests are listed in
tests/test_frameworks_jvm.py's KOTEST table)."""

PHPUNIT_CLASS = "<?php\nclass ATest extends TestCase { public function testA() {} }\n"
JAVA_JUNIT = "import org.junit.Test;\nclass ParserTest { @Test public void a() {} }\n"

# Indented as in the table it came from: found() dedents it.
KOTEST_FUN_SPEC = """\
        import io.kotest.core.spec.style.FunSpec

        class ParserTest : FunSpec({
            test("a") {}
            xtest("b") {}
            test("f:c") {}
            test("!d") {}
            test("e").config(enabled = false) {}
            test("f").config(enabledIf = { linux }) {}
            test("g").config(timeout = 2.seconds) {}
            context("ctx") {
                test("h") {}
            }
            xcontext("off") {
                test("i") {}
            }
            context("empty") {}
        })
        """
