"""PHPUnit: ``*Test.php`` files under a ``test``/``tests`` directory, or what the
``<testsuite>`` entries of ``phpunit.xml`` (``.dist``) name.

The XML is data from the repository: it is read with expat alone, bounded in bytes
and depth, and a document with a DTD is refused outright, so that no entity (external
or expanding) is ever resolved (ADR 0012).
"""

from __future__ import annotations

import dataclasses
import posixpath
import xml.parsers.expat

from ..globs import check_globs, glob_matches
from ..patterns import check_count
from ..problems import Refused
from .definition import Framework, Scope, Settings

# Where PHPUnit looks by convention when no config says: its default suffix.
DEFAULTS = Settings(files=("**/{test,tests,Test,Tests}/**/*Test.php",))
CONFIG_FILES = ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml")
# Real configs are a few KiB and nest four or five levels.
MAX_CONFIG_BYTES = 1024 * 1024
MAX_DEPTH = 64
_DEFAULT_SUFFIX = "Test.php"


class _Suites:
    """The expat handlers: the ``<directory>``, ``<file>`` and ``<exclude>`` entries
    of each ``<testsuite>``, one :class:`Settings` each (an exclude is its suite's
    own: psr7's unit suite excludes ``tests/Integration``, its next suite runs it)."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.suites: list[Settings] = []
        self.files: list[str] = []
        self.excludes: list[str] = []
        self.entry: tuple[str, str, str] | None = None  # kind, prefix, suffix
        self.chars: list[str] = []

    def start(self, name: str, attributes: dict[str, str]) -> None:
        self.stack.append(name)
        if len(self.stack) > MAX_DEPTH:
            raise Refused(f"XML nested deeper than {MAX_DEPTH} levels: not read", "config")
        if name in ("directory", "file", "exclude") and self._in_testsuite():
            prefix = attributes.get("prefix", "")
            suffix = attributes.get("suffix", _DEFAULT_SUFFIX)
            self.entry, self.chars = (name, prefix, suffix), []

    def end(self, name: str) -> None:
        self.stack.pop()
        if name == "testsuite":
            if self.files:
                self.suites.append(Settings(files=tuple(self.files), excludes=tuple(self.excludes)))
            self.files, self.excludes = [], []
        if self.entry is not None and name == self.entry[0]:
            kind, prefix, suffix = self.entry
            self.entry = None
            self._add(kind, "".join(self.chars).strip(), prefix, suffix)

    def text(self, data: str) -> None:
        if self.entry is not None:
            self.chars.append(data)

    def _in_testsuite(self) -> bool:
        return len(self.stack) >= 2 and self.stack[-2] == "testsuite"

    def _add(self, kind: str, value: str, prefix: str, suffix: str) -> None:
        path = posixpath.normpath(value.replace("\\", "/")).removeprefix("./")
        if not value or path.startswith(("/", "..")):
            return  # outside the repository: nothing of it to count
        root = "" if path == "." else path + "/"
        if kind == "directory":
            self.files.append(f"{root}**/{_glob_literal(prefix)}*{_glob_literal(suffix)}")
        elif kind == "file":
            self.files.append(path)
        else:
            self.excludes.extend((path, f"{root}**"))


def _glob_literal(value: str) -> str:
    return "".join(f"[{c}]" if c in "*?[]{}!" else c for c in value)


def _refuse_dtd(*_: object) -> None:
    raise Refused("phpunit.xml with a DTD: not read (its entities are never resolved)", "config")


def read_config(name: str, content: bytes, defaults: Settings) -> Settings:
    """The test files ``phpunit.xml`` names, as globs from its directory; PHPUnit's
    ``<directory suffix prefix>`` (default suffix ``Test.php``), ``<file>`` and
    ``<exclude>``. A config without a ``<testsuite>`` runs nothing by itself: the
    defaults, said so."""
    if len(content) > MAX_CONFIG_BYTES:
        raise Refused(f"{name} over {MAX_CONFIG_BYTES:,} bytes: not read", "config")
    suites = _Suites()
    parser = xml.parsers.expat.ParserCreate()
    parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _refuse_dtd
    parser.EntityDeclHandler = _refuse_dtd
    parser.StartElementHandler = suites.start
    parser.EndElementHandler = suites.end
    parser.CharacterDataHandler = suites.text
    try:
        parser.Parse(content, True)
    except xml.parsers.expat.ExpatError as exc:
        raise ValueError(f"{name} is not XML: {exc}") from None
    if not suites.suites:
        return dataclasses.replace(defaults, note=f"{name} names no testsuite: defaults")
    # Every suite's patterns are tried on every PHP file: the limit holds over them all
    # (15,000 one-directory suites, 0.9 MB, cost 0.4 s per file and per look).
    check_count(
        tuple(p for s in suites.suites for p in (*s.files, *s.excludes)), "testsuite pattern"
    )
    for suite in suites.suites:
        check_globs((*suite.files, *suite.excludes), "testsuite entry")
    if len(suites.suites) == 1:
        return suites.suites[0]
    return Settings(projects=tuple(suites.suites))


def selects(path: str, scope: Scope) -> bool:
    """Run by ``phpunit`` from the config's directory: named by a testsuite's entries
    and by none of that suite's excludes."""
    relative = scope.relative(path)
    if relative.startswith("../"):
        return False
    return any(
        any(glob_matches(p, relative) for p in suite.files)
        and not any(glob_matches(p, relative) for p in suite.excludes)
        for suite in scope.settings.each_project()
    )


FRAMEWORK = Framework(
    name="phpunit",
    family="php",
    selects=selects,
    defaults=DEFAULTS,
    imports=("PHPUnit",),
    config_files=CONFIG_FILES,
    read_config=read_config,
    signals=frozenset({"testcase"}),
    requires="testcase",
)
