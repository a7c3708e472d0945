"""xUnit.net: ``[Fact]`` and ``[Theory]`` methods (:mod:`..csharp`) in C# test projects
(:mod:`.dotnet`)."""

from __future__ import annotations

from .definition import Framework
from .dotnet import XUNIT, hint, in_test_project

FRAMEWORK = Framework(
    name="xunit",
    family="csharp",
    selects=lambda path, scope: in_test_project(path, scope),
    imports=("Xunit",),
    signals=frozenset({XUNIT}),
    requires=XUNIT,
    needs_import=True,
    hint=hint(XUNIT),
)
