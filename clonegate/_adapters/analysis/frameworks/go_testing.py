"""Go's ``testing`` package: ``_test.go`` files, as ``go test ./...`` finds them."""

from __future__ import annotations

from .definition import Framework, Scope


def selects(path: str, scope: Scope) -> bool:
    """``go`` ignores ``testdata`` directories and those starting with ``_`` or ``.``."""
    *directories, name = path.split("/")
    if any(d == "testdata" or d.startswith(("_", ".")) for d in directories):
        return False
    return name.endswith("_test.go") and not name.startswith(("_", "."))


FRAMEWORK = Framework(name="go-testing", family="go", selects=selects, fallback=True)
