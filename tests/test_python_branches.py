"""Python test definitions under ``if``/``elif``/``else``, ``try``/``except``/``else``/
``finally`` and ``with``, at module and class level: the runner collects them, and
each branch counts, one test per place a test is written (issue 40, ADR 0005).
Table-driven, with what is NOT a test; the expected lists are what
``pytest --collect-only`` lists when the branch that holds them runs."""

from __future__ import annotations

import pytest

from .support.scans import found

BRANCHES = [
    (
        "unittest methods under if/elif/else in a class body: every branch",
        """\
        import sys, unittest
        class T(unittest.TestCase):
            def test_first(self): pass
            if sys.platform == "win32":
                def test_windows(self): pass
            elif sys.platform == "darwin":
                def test_mac(self): pass
            else:
                def test_other(self): pass
                def helper(self): pass
            def test_last(self): pass""",
        [
            ("T/test_first", "active"),
            ("T/test_windows", "active"),
            ("T/test_mac", "active"),
            ("T/test_other", "active"),
            ("T/test_last", "active"),
        ],
    ),
    (
        "one name in both branches of an if: each place counts",
        """\
        import sys
        if sys.version_info >= (3, 12):
            def test_api(): pass
        else:
            def test_api(): pass""",
        [("test_api", "active"), ("test_api", "active")],
    ),
    (
        "try/except/else/finally at module level, markers kept",
        """\
        import pytest
        try:
            import numpy
            def test_numpy(): pass
        except ImportError:
            @pytest.mark.skip(reason="no numpy")
            def test_numpy_missing(): pass
        else:
            def test_numpy_else(): pass
        finally:
            def test_finally(): pass""",
        [
            ("test_numpy", "active"),
            ("test_numpy_missing", "skipped"),
            ("test_numpy_else", "active"),
            ("test_finally", "active"),
        ],
    ),
    (
        "with at module and class level",
        """\
        import warnings
        with warnings.catch_warnings():
            def test_module(): pass
            class TestA:
                with warnings.catch_warnings():
                    def test_method(self): pass""",
        [("test_module", "active"), ("TestA/test_method", "active")],
    ),
    (
        "a test class defined under an if, and nested blocks",
        """\
        import os
        if os.name == "posix":
            try:
                class TestPosix:
                    def test_a(self): pass
            except Exception:
                pass""",
        [("TestPosix/test_a", "active")],
    ),
    (
        "a base class defined under an if passes its tests on",
        """\
        import sys, unittest
        if sys.platform:
            class Base(unittest.TestCase):
                def test_shared(self): pass
        class Child(Base):
            def test_own(self): pass""",
        [
            ("Base/test_shared", "active"),
            ("Child/test_own", "active"),
            ("Child/test_shared", "active"),
        ],
    ),
    (
        "a name defined twice in one branch is its last definition",
        """\
        if True:
            def test_a(): pass
            def test_a(): pass""",
        [("test_a", "active")],
    ),
    (
        "not tests: helpers under if, definitions inside a function, a helper class",
        """\
        import sys
        if sys.platform:
            def helper(): pass
        def make():
            if True:
                def test_inner(): pass
        class Helper:
            if True:
                def test_x(self): pass""",
        [],
    ),
    (
        "an if __name__ == '__main__' body never runs under a runner: its else does",
        """\
        import unittest
        class TestA(unittest.TestCase):
            def test_a(self): pass
        if __name__ == "__main__":
            class PerfA(TestA):
                def test_perf(self): pass
            unittest.main()
        elif "__main__" == __name__:
            def test_never(): pass
        else:
            def test_imported(): pass
        if __name__ != "__main__":
            def test_other(): pass""",
        [("test_imported", "active"), ("test_other", "active"), ("TestA/test_a", "active")],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), BRANCHES, ids=[c[0] for c in BRANCHES])
def test_python_branches(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("tests/test_cases.py", source) == expected


def test_a_long_elif_chain_is_read_without_recursion() -> None:
    """Each ``elif`` nests an ``if`` in the one before, and a hostile file chains
    hundreds: read all the same, each branch's test found."""
    count = 900
    lines = ["if x == 0:", "    def test_0(): pass"]
    for i in range(1, count):
        lines += [f"elif x == {i}:", f"    def test_{i}(): pass"]
    tests = found("tests/test_chain.py", "\n".join(lines))
    assert tests == [(f"test_{i}", "active") for i in range(count)]
