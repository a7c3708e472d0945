"""Issue 41's readers under hostile files (ADR 0012): each file costs about its size,
whatever its nesting, up to the syntax tree's depth bound."""

from __future__ import annotations

import pytest

from clonegate._adapters.analysis.config import ConfigScopes
from clonegate._adapters.analysis.scan import analyze_file

from .support.scans import found

XUNIT_PROJECT = {
    "tests/T/T.Tests.csproj": b'<Project><PackageReference Include="xunit" /></Project>'
}


# tree-sitter's Node.parent descends from the root (no parent pointers): a walk up
# the ancestors cost depth² per declaration.
@pytest.mark.timeout(60)  # walked up: 3.4 s for 2,000 classes 200 namespaces deep
def test_classes_in_deep_namespaces_cost_their_number_not_depth_squared() -> None:
    body = b"namespace a {" * 450 + b"class A { [Fact] void T() {} }\n" * 20_000 + b"}" * 450
    scopes = ConfigScopes([*XUNIT_PROJECT, "tests/T/A.cs"], XUNIT_PROJECT.__getitem__)
    result = analyze_file("tests/T/A.cs", b"using Xunit;\n" + body, scopes)
    assert result is not None
    assert sum(1 for _ in result.all_tests()) == 20_000


@pytest.mark.timeout(60)  # walked up: 3.6 s for 10,000 functions 100 blocks deep
def test_functions_in_deep_blocks_cost_their_number_not_depth_squared() -> None:
    source = (
        "import XCTest\nclass ATests: XCTestCase { func testA() {} }\n"
        + "do {\n" * 300
        + "func testLocal() {}\n" * 30_000
        + "}\n" * 300
    )
    assert found("Tests/ATests.swift", source) == [("ATests/testA", "active")]


@pytest.mark.timeout(60)  # shlex: 9 s for 1 MiB, quadratic (one token grows by concatenation)
def test_a_long_rspec_options_file_is_refused_before_it_is_split() -> None:
    rspec_options = b"--pattern '" + b"spec/**/*_spec.rb " * 600_000  # 10.8 MB, never closed
    scopes = ConfigScopes([".rspec", "spec/a_spec.rb"], lambda _: rspec_options)
    result = analyze_file("spec/a_spec.rb", b'describe "g" do\n  it "x" do end\nend\n', scopes)
    assert result is not None
    assert [t.name for t in result.all_tests()] == ["x"]
    assert result.config_note == ".rspec could not be read: defaults"
    assert [(e.path, e.phase) for e in scopes.errors] == [(".rspec", "config")]
    assert "over 65,536 bytes" in scopes.errors[0].message


def test_a_phpunit_xml_with_thousands_of_testsuites_is_refused() -> None:
    """Each suite's patterns are tried on every PHP file: 15,000 one-directory suites
    (0.9 MB) cost 0.4 s per file and per look (its RE2 programs outgrow their cache).
    The limit on patterns holds over all the suites, not each one alone."""
    suites = b"".join(b"<testsuite><directory>d%d</directory></testsuite>" % i for i in range(201))
    config = b"<phpunit><testsuites>" + suites + b"</testsuites></phpunit>"
    scopes = ConfigScopes(["phpunit.xml", "tests/ATest.php"], lambda _: config)
    source = b"<?php\nclass ATest extends TestCase { public function testA() {} }\n"
    result = analyze_file("tests/ATest.php", source, scopes)
    assert result is not None
    assert [t.name for t in result.all_tests()] == ["testA"]
    assert result.config_note == "phpunit.xml could not be read: defaults"
    assert [(e.path, e.phase) for e in scopes.errors] == [("phpunit.xml", "config")]
    assert "201 testsuite patterns, over the limit of 200" in scopes.errors[0].message


@pytest.mark.timeout(60)  # walked up: 4.3 s for 5,000 local classes 300 blocks deep
def test_java_local_classes_in_deep_blocks_cost_their_number_not_depth_squared() -> None:
    source = (
        "import org.junit.jupiter.api.Test;\nclass ATest {\n  @Test void a() {\n"
        + "{\n" * 450
        + "class L { @Test void t() {} }\n" * 60_000
        + "}\n" * 450
        + "  }\n}\n"
    )
    result = analyze_file(
        "src/test/java/ATest.java", source.encode(), ConfigScopes([], lambda _: b"")
    )
    assert result is not None
    assert sum(1 for _ in result.all_tests()) == 60_001
