"""The Kotlin reader's costs: its grammar is built only for a Kotlin file, and a kotest
spec is read in time linear in its size (issue 40; ADR 0003, ADR 0012)."""

from __future__ import annotations

import pytest

from .support.sample_sources import JAVA_JUNIT, KOTEST_FUN_SPEC
from .support.scans import found, grammars_built


def test_the_kotlin_parser_is_built_only_when_a_kotlin_file_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A worker builds the parsers of the languages it meets (ADR 0003): the Kotlin
    # grammar is 3.6 MB, and most repositories hold no Kotlin.
    with grammars_built(monkeypatch, "kotlin") as built:
        found("src/test/java/p/ParserTest.java", JAVA_JUNIT)
        found("tests/test_a.py", "def test_a():\n    pass\n")
        found("p_test.go", "package p\nfunc TestA(t *testing.T) {}\n")
        assert built == []
        assert found("src/test/kotlin/p/ParserTest.kt", KOTEST_FUN_SPEC)
        assert built == ["kotlin"]


def test_nested_withdata_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Deciding whether a withData holds tests by reading its lambda first, then again,
    # doubled the work at each level: 22 nested levels took 35 s (a hostile spec).
    from clonegate._adapters.analysis import kotest_specs

    looked_at: list[int] = []
    real = kotest_specs._registration

    def counted(node: object) -> object:
        looked_at.append(1)
        return real(node)  # type: ignore[arg-type]

    monkeypatch.setattr(kotest_specs, "_registration", counted)
    levels = 20
    source = (
        "import io.kotest.core.spec.style.FunSpec\nclass ParserTest : FunSpec({\n"
        + "withData(1) {\n" * levels
        + 'test("leaf") {}\n'
        + "}\n" * levels
        + "})\n"
    )
    chain = "/".join(["ParserTest"] + ["withData"] * levels + ["leaf"])
    assert found("src/test/kotlin/p/ParserTest.kt", source) == [(chain, "active")]
    assert len(looked_at) < 50 * levels  # each node once: linear, not 2**levels
