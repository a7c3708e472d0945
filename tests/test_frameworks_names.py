"""Test names as the source writes them (ADR 0005: "string and template literals
without quotes, placeholders kept"), in issue 41's readers."""

from __future__ import annotations

import pytest

from .support.scans import found

NAMES = [
    (
        "rspec: an interpolation is kept as written",
        "spec/a_spec.rb",
        'describe "g #{x}" do\n  it "n #{i}" do end\nend\n',
        [("g #{x}/n #{i}", "active")],
    ),
    (
        "rspec: escapes are kept as written",
        "spec/a_spec.rb",
        'describe "g" do\n  it "say \\"hi\\"\\n" do end\nend\n',
        [('g/say \\"hi\\"\\n', "active")],
    ),
    (
        "rspec: two examples named only by interpolations keep their names",
        "spec/a_spec.rb",
        'describe "g" do\n  it "#{a}" do end\n  it "#{b}" do end\nend\n',
        [("g/#{a}", "active"), ("g/#{b}", "active")],
    ),
    (
        "minitest: an interpolated Rails test name is kept as written",
        "test/a_test.rb",
        'class ATest < ActiveSupport::TestCase\n  test "a #{x}" do end\nend\n',
        [("ATest/a #{x}", "active")],
    ),
]


@pytest.mark.parametrize(("case", "path", "source", "expected"), NAMES, ids=[c[0] for c in NAMES])
def test_names_are_the_sources(
    case: str, path: str, source: str, expected: list[tuple[str, str]]
) -> None:
    assert found(path, source) == expected
