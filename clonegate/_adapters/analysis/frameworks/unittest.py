"""unittest: ``TestCase`` subclasses, in the files ``unittest discover`` takes
(``test*.py``), or in pytest's files where pytest is configured (it runs them then)."""

from __future__ import annotations

from . import pytest
from .definition import Framework, Settings

FRAMEWORK = Framework(
    name="unittest",
    family="python",
    selects=pytest.selects,
    defaults=Settings(names=("test*.py",), skip_dirs=pytest.DEFAULTS.skip_dirs),
    imports=("unittest",),
    settings_from="pytest",
    signals=frozenset({"testcase"}),
    requires="testcase",
)
