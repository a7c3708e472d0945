"""MSTest: ``[TestMethod]`` methods of ``[TestClass]`` classes (:mod:`..csharp`) in C#
test projects (:mod:`.dotnet`)."""

from __future__ import annotations

from .definition import Framework
from .dotnet import MSTEST, hint, in_test_project

FRAMEWORK = Framework(
    name="mstest",
    family="csharp",
    selects=lambda path, scope: in_test_project(path, scope),
    imports=("Microsoft.VisualStudio.TestTools.UnitTesting",),
    signals=frozenset({MSTEST}),
    requires=MSTEST,
    needs_import=True,
    hint=hint(MSTEST),
)
