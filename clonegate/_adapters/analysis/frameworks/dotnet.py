"""C# test projects: the files xUnit, NUnit and MSTest run (ADR 0004).

``dotnet test`` runs the test projects of a solution: a project file (``*.csproj``)
that references the test SDK or a test framework. A C# file belongs to the project
in the nearest directory above it that holds a ``*.csproj``; it is a test source when
that project is a test project. A ``Directory.Build.props`` naming one of the signs
makes every project below it a test project (repositories that add xunit to all their
``*.Tests`` projects from one place). The same rule found the unread C# files of
issue 40.
"""

from __future__ import annotations

import posixpath
import re

from .definition import Scope

# Lowercased: a project file is compared lowercased (``NUnit``, ``xunit.v3``,
# ``MSTest.TestFramework``, ``Microsoft.NET.Test.Sdk``).
PROJECT_SIGNS = (b"microsoft.net.test.sdk", b"xunit", b"nunit", b"mstest")
BUILD_PROPS = "Directory.Build.props"
# The frameworks, as the C# reader's signals name them.
XUNIT, NUNIT, MSTEST = "xunit", "nunit", "mstest"
_HINTS: dict[str, re.Pattern[bytes]] = {
    XUNIT: re.compile(rb"(?:Fact|Theory)(?:Attribute)?\b"),
    NUNIT: re.compile(rb"\b(?:Test|TestCase|TestCaseSource|Theory)(?:Attribute)?\b"),
    MSTEST: re.compile(rb"TestMethod(?:Attribute)?\b"),
}


def hint(framework: str) -> re.Pattern[bytes]:
    """What a file's bytes hold when it has a test of ``framework``: the files of a
    test project that do not are never parsed."""
    return _HINTS[framework]


def is_project_file(name: str) -> bool:
    """Whether a file of this name is read for the test-project facts."""
    return name.endswith(".csproj") or name == BUILD_PROPS


def names_a_sign(content: bytes) -> bool:
    lowered = content.lower()
    return any(sign in lowered for sign in PROJECT_SIGNS)


def in_test_project(path: str, scope: Scope) -> bool:
    """Whether the nearest project above ``path`` is a test project."""
    directory = posixpath.dirname(path)
    while directory not in scope.projects:
        if not directory:
            return False
        directory = posixpath.dirname(directory)
    return directory in scope.test_projects


def test_projects(projects: set[str], signed: set[str], props: set[str]) -> frozenset[str]:
    """The project directories that are test projects: their own project file names a
    sign (``signed``), or a ``Directory.Build.props`` at or above them does (``props``)."""
    return frozenset(d for d in projects if d in signed or _below_props(d, props))


def _below_props(directory: str, props: set[str]) -> bool:
    while directory not in props:
        if not directory:
            return False
        directory = posixpath.dirname(directory)
    return True
