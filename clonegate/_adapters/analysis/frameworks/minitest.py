"""minitest: ``test/**/{test_*,*_test}.rb`` and ``test/**/*_spec.rb``, or a literal
``Rake::TestTask`` pattern of the Rakefile; read by :mod:`..ruby`."""

from __future__ import annotations

import re

from ..globs import check_globs, glob_matches
from .definition import Framework, Scope, Settings

DEFAULTS = Settings(
    files=("test/**/{test_*,*_test}.rb", "test/**/*_spec.rb"),
    excludes=("**/test_helper.rb",),  # loaded by the tests, none of its own
    interface="minitest",
)
# ``t.pattern = "test/**/*_test.rb"`` and ``t.test_files = FileList["a", "b"]``.
_PATTERN = re.compile(rb"""\.pattern\s*=\s*(['"])([^'"#\n]+)\1""")
_FILE_LIST = re.compile(rb"""\.test_files\s*=\s*FileList\[([^\]\n]*)\]""")
_STRING = re.compile(rb"""(['"])([^'"#\n]+)\1""")


def read_config(name: str, content: bytes, defaults: Settings) -> Settings | None:
    """The Rakefile's ``Rake::TestTask`` patterns where they are literal strings; a
    Rakefile without a TestTask is not minitest's config (None); one whose patterns
    are not literal leaves the defaults, noted."""
    if b"TestTask" not in content:
        return None
    files = [m.group(2).decode() for m in _PATTERN.finditer(content)]
    for listed in _FILE_LIST.finditer(content):
        files += [m.group(2).decode() for m in _STRING.finditer(listed.group(1))]
    if not files:
        if b".pattern" in content or b".test_files" in content:
            note = f"{name}'s TestTask pattern is code: defaults"
            return Settings(
                defaults.files, excludes=defaults.excludes, interface="minitest", note=note
            )
        # Rake::TestTask's own default pattern.
        files = ["test/test*.rb"]
    patterns = tuple(f.removeprefix("./") for f in files)
    check_globs(patterns, "TestTask pattern")
    return Settings(files=patterns, interface="minitest")


def selects(path: str, scope: Scope) -> bool:
    settings = scope.settings
    if any(glob_matches(e, path) for e in settings.excludes):
        return False
    if scope.directory is None:
        # No Rakefile above: the conventional layout below any ``test`` directory.
        parts = path.split("/")
        tops = ["/".join(parts[i + 1 :]) for i, p in enumerate(parts[:-1]) if p == "test"]
        return any(glob_matches(f.removeprefix("test/"), t) for t in tops for f in settings.files)
    relative = scope.relative(path)
    return any(glob_matches(pattern, relative) for pattern in settings.files)


FRAMEWORK = Framework(
    name="minitest",
    family="ruby",
    selects=selects,
    defaults=DEFAULTS,
    imports=("minitest", "test_helper", "test/unit", "helper"),
    config_signs=(("Rakefile", b"TestTask"),),
    read_config=read_config,
    signals=frozenset({"minitest"}),
    fallback=True,
)
