"""NUnit: ``[Test]``, ``[TestCase]``, ``[TestCaseSource]`` and ``[Theory]`` methods
(:mod:`..csharp`) in C# test projects (:mod:`.dotnet`)."""

from __future__ import annotations

from .definition import Framework
from .dotnet import NUNIT, hint, in_test_project

FRAMEWORK = Framework(
    name="nunit",
    family="csharp",
    selects=lambda path, scope: in_test_project(path, scope),
    imports=("NUnit.Framework",),
    signals=frozenset({NUNIT}),
    requires=NUNIT,
    needs_import=True,
    hint=hint(NUNIT),
)
