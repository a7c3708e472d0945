"""A mutable outline of one file's suites and tests, and how markers become statuses."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..._domain.inventory import TestCase, TestStatus, TestSuite


@dataclass
class Outline:
    """Built while walking a syntax tree; :meth:`freeze` turns it into the domain model.

    ``marker`` is what the source says about this node itself (``it.skip``,
    ``@Disabled``, ``fdescribe``...); statuses are only settled in :meth:`freeze`, where
    markers of enclosing suites apply to what they contain.
    """

    name: str = ""
    line: int = 0
    marker: TestStatus | None = None
    suites: list[Outline] = field(default_factory=list)
    tests: list[tuple[str, int, TestStatus | None]] = field(default_factory=list)

    def suite(self, name: str, line: int, marker: TestStatus | None = None) -> Outline:
        child = Outline(name, line, marker)
        self.suites.append(child)
        return child

    def test(self, name: str, line: int, marker: TestStatus | None = None) -> None:
        self.tests.append((name, line, marker))

    def is_empty(self) -> bool:
        return not self.tests and all(s.is_empty() for s in self.suites)

    def drop_empty_suites(self) -> None:
        """Forget suites without tests (helper classes, modules of plain code)."""
        self.suites = [s for s in self.suites if not s.is_empty()]
        for suite in self.suites:
            suite.drop_empty_suites()

    def freeze(self) -> tuple[tuple[TestSuite, ...], tuple[TestCase, ...]]:
        """The top-level suites and tests, with every test's effective status; this
        node's own marker (a module's ``pytestmark``) applies to all of them."""
        return self._freeze_children((self.marker,) if self.marker else ())

    def _freeze_children(
        self, inherited: tuple[TestStatus, ...]
    ) -> tuple[tuple[TestSuite, ...], tuple[TestCase, ...]]:
        suites = []
        for child in self.suites:
            markers = inherited + ((child.marker,) if child.marker else ())
            sub_suites, sub_tests = child._freeze_children(markers)
            suites.append(TestSuite(child.name, child.line, sub_suites, sub_tests))
        tests = tuple(
            TestCase(name, line, effective_status(inherited, marker))
            for name, line, marker in self.tests
        )
        return tuple(suites), tests


def effective_status(inherited: tuple[TestStatus, ...], own: TestStatus | None) -> TestStatus:
    """A test's status from its own marker and those of its enclosing suites (ADR 0005).

    todo (a test with no body) > skipped anywhere > focused anywhere > xfail > active.
    """
    markers = (*inherited, own) if own else inherited
    if own is TestStatus.TODO:
        return TestStatus.TODO
    for status in (TestStatus.SKIPPED, TestStatus.FOCUSED, TestStatus.XFAIL):
        if status in markers:
            return status
    return TestStatus.ACTIVE


def strongest(markers: Iterable[TestStatus | None]) -> TestStatus | None:
    """One marker for several written on one test or suite (``fit "x", :skip``,
    ``->skip()->only()``): the first in :func:`effective_status`'s order, whichever
    was written first; None for none."""
    present = tuple(m for m in markers if m is not None)
    if not present:
        return None
    return effective_status(present, TestStatus.TODO if TestStatus.TODO in present else None)
