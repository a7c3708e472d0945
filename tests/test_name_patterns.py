"""pytest's file-name patterns (``python_files``): plain names, matched without RE2,
match exactly what RE2 matches (issue 47)."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from clonegate._adapters.analysis import globs
from clonegate._adapters.analysis.patterns import searchable

# What fnmatch and RE2 treat specially, a newline (``*`` crosses it), a character
# outside ASCII and a lone surrogate (an undecodable byte of a path).
_PATTERN_CHARS = "ab_.*?[]!é"
_PATH_CHARS = "ab_./*\né\udcff"


def _on_re2(patterns: tuple[str, ...], path: str) -> bool:
    """The match as RE2 runs it: the union of the patterns' translations."""
    names, paths = globs._fnmatch_union(patterns)
    path = searchable(path)
    if names is not None and names.fullmatch(path.rsplit("/", 1)[-1]):
        return True
    return paths is not None and paths.fullmatch(path) is not None


@given(
    st.lists(st.text(_PATTERN_CHARS, max_size=6), min_size=1, max_size=3).map(tuple),
    st.text(_PATH_CHARS, max_size=12),
)
@example(("ab*ba",), "aba")  # prefix and suffix overlap: too short to match
@example(("test_*.py",), "test_.py")
@example(("test_*.py", "*_test.py"), "tests/x_test.py")
@example(("test*.py",), "dir/test\nx.py")
@example(("conftest.py",), "a/conftest.py")
@example(("",), "a/")
def test_plain_names_match_as_on_re2(patterns: tuple[str, ...], path: str) -> None:
    assert globs.name_matches(patterns, path) == _on_re2(patterns, path)


def test_only_plain_names_skip_re2() -> None:
    assert globs._affixes(("test_*.py", "*_test.py", "conftest.py")) == (
        ("test_", ".py"),
        ("", "_test.py"),
        ("conftest.py", None),
    )
    for other in ("a*b*c.py", "test_?.py", "[ab]*.py", "test/*_test.py", "tést_*.py"):
        assert globs._affixes(("test_*.py", other)) is None
