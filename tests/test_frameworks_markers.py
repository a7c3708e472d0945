"""Several markers written on one test or group (issue 41's readers; ADR 0005): the
status is the one ADR 0005's order puts first (todo, then skipped, then focused, then
xfail), whichever is written first; a skip among them always skips."""

from __future__ import annotations

import pytest

from .support.scans import found

MARKERS = [
    (
        "rspec: fit with skip metadata",
        "spec/a_spec.rb",
        'describe "g" do\n  fit "x", :skip do end\nend\n',
        [("g/x", "skipped")],
    ),
    (
        "rspec: focus metadata, a top-level skip in the body",
        "spec/a_spec.rb",
        'describe "g" do\n  it "x", :focus do\n    skip\n  end\nend\n',
        [("g/x", "skipped")],
    ),
    (
        "rspec: fit, a top-level skip in the body",
        "spec/a_spec.rb",
        'describe "g" do\n  fit "x" do\n    skip "why"\n  end\nend\n',
        [("g/x", "skipped")],
    ),
    (
        "rspec: pending metadata, a top-level skip in the body",
        "spec/a_spec.rb",
        'describe "g" do\n  it "x", :pending do\n    skip\n  end\nend\n',
        [("g/x", "skipped")],
    ),
    (
        "rspec: fdescribe with skip metadata skips its examples",
        "spec/a_spec.rb",
        'fdescribe "g", skip: true do\n  it "x" do end\nend\n',
        [("g/x", "skipped")],
    ),
    (
        "rspec: focus metadata and a pending body is focused",
        "spec/a_spec.rb",
        'describe "g" do\n  it "x", :focus do\n    pending\n  end\nend\n',
        [("g/x", "focused")],
    ),
    (
        "rspec: pending then focus metadata is focused",
        "spec/a_spec.rb",
        'describe "g" do\n  it "x", :pending, focus: true do end\nend\n',
        [("g/x", "focused")],
    ),
    (
        "rspec: one marker alone is kept",
        "spec/a_spec.rb",
        'describe "g" do\n  fit "f" do end\n  pending "p" do end\n  it "t"\nend\n',
        [("g/f", "focused"), ("g/p", "xfail"), ("g/t", "todo")],
    ),
    (
        "pest: skip then only",
        "tests/ATest.php",
        "<?php\nit('x', function () {})->skip()->only();\n",
        [("it x", "skipped")],
    ),
    (
        "pest: only then skip",
        "tests/ATest.php",
        "<?php\nit('x', function () {})->only()->skip();\n",
        [("it x", "skipped")],
    ),
    (
        "pest: todo wins over only",
        "tests/ATest.php",
        "<?php\ntest('x')->todo()->only();\n",
        [("x", "todo")],
    ),
    (
        "pest: a describe skipped then focused skips its tests",
        "tests/ATest.php",
        "<?php\ndescribe('g', function () { test('x', fn () => 1); })->skip()->only();\n",
        [("g/x", "skipped")],
    ),
]


@pytest.mark.parametrize(
    ("case", "path", "source", "expected"), MARKERS, ids=[c[0] for c in MARKERS]
)
def test_markers_combine_in_adr_order(
    case: str, path: str, source: str, expected: list[tuple[str, str]]
) -> None:
    assert found(path, source) == expected
