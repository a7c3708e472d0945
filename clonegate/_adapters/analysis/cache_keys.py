"""Keys and values of the per-file analysis cache (issue 18, ADR 0016).

A candidate file's outcome (:func:`.scan.analyze_file`) depends on its bytes, its
language, what the config scopes say about its path, and the analyzer's code. The
key is a digest of exactly those: the blob's sha, a *context* (the language and a
fingerprint of what :func:`.scan.analyze_file` reads from the scopes for that path:
see :class:`ScopeContexts`), this module's value format, and the analyzer version.
The path itself is not in the key: the readers do not depend on it beyond the
language (a parse error's message does not name it), so the same file in a fork, or
copied to a path with the same context, is one entry.

A value is compact JSON, told apart by its JSON type:

* ``0``: not a test file (``analyze_file`` returned None);
* a string: the message of a parse error (a ``ScanError`` of phase ``parse``);
* a list of two strings: the phase and message of another ``ScanError`` (``query``:
  a file past a bound of :mod:`.syntax`; deterministic, so worth keeping);
* a list: a test file without its path, ``[framework, language, config_note,
  tests, suites]``; a test is ``[name, line]`` (active) or ``[name, line, status]``
  (``status``: a :class:`TestStatus` value); a suite is ``[name, line, tests,
  suites]``.

Read errors are never values: a blob over the size limit or a corrupt object says
nothing about the content the key names. Values come back from a database anyone
may have edited, so :func:`decode` checks every field and raises
:class:`UndecodableValue` rather than build a wrong inventory; nothing is unpickled.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import posixpath
from typing import Any

from ..._domain.inventory import ScanError, TestCase, TestFile, TestStatus, TestSuite
from .config import ConfigScopes
from .detect import FAMILY, language_of
from .frameworks import by_name, of_family
from .frameworks.definition import Settings

__all__ = [
    "Outcome",
    "ScopeContexts",
    "UndecodableValue",
    "cache_key",
    "decode",
    "encode_file",
    "encode_parse_error",
]

# Part of every key: a change to the value format below must not read old values.
VALUE_FORMAT = b"clonegate-cache-value/1"

Outcome = TestFile | ScanError | None
_STATUS = {status.value: status for status in TestStatus}
_COMPACT = (",", ":")  # json.dumps's separators without spaces


class UndecodableValue(ValueError):
    """A cached value that is not one :func:`encode_file` or :func:`encode_parse_error`
    made; the file is analyzed again instead."""


class ScopeContexts:
    """The context of each candidate file of one commit: which frameworks may claim it,
    and from which settings, as :func:`.scan.analyze_file` would see them.

    For the file's family, the fingerprint holds: ``configured(path, family)``; the
    framework names of the config entries ``choose`` walks upwards, in that order;
    for each framework of the family (registry order) whether ``selecting(path,
    family)`` holds it, and ``scope_for(path, framework).settings`` encoded field by
    field. Everything but ``selecting`` depends only on the file's directory, so it
    is worked out once per directory and family.
    """

    def __init__(self, scopes: ConfigScopes) -> None:
        self._scopes = scopes
        self._by_directory: dict[tuple[str, str], bytes] = {}

    def of(self, path: str) -> bytes | None:
        """The 16-byte context of ``path``; None if it is no candidate (no language, or
        no framework's rules run it nor takes its import as the rule: the same test as
        :func:`.scan.is_candidate`)."""
        language = language_of(path)
        if language is None:
            return None
        family = FAMILY[language]
        selecting = self._scopes.selecting(path, family)
        trusting = self._scopes.read_for_imports(path, family)
        if not selecting and not trusting:
            return None
        directory = self._directory(path, family)
        names = [f.name for f in selecting] + ["imports:" + f.name for f in trusting]
        chosen = ",".join(names).encode()
        digest = hashlib.blake2b(digest_size=16)
        for field in (language.encode(), directory, chosen):
            digest.update(len(field).to_bytes(4, "big") + field)
        return digest.digest()

    def _directory(self, path: str, family: str) -> bytes:
        directory = posixpath.dirname(path)
        known = self._by_directory.get((directory, family))
        if known is None:
            frameworks = of_family(family)
            scopes = self._scopes
            # Only this family's names matter to ``choose``, in the order it meets them.
            # ConfigScopes has no public view of that order; this module is its only
            # other reader, inside the same package.
            upwards = [
                name
                for _, entries in scopes._upwards(path)
                for name, _, _ in entries
                if by_name(name).reads(family)
            ]
            settings = [_settings(scopes.scope_for(path, f).settings) for f in frameworks]
            facts = [scopes.configured(path, family), upwards, settings]
            known = json.dumps(facts, separators=_COMPACT).encode()
            self._by_directory[directory, family] = known
        return known


def _settings(settings: Settings) -> list[Any]:
    # Field by field, in declaration order: tuples become lists, the rest are str and
    # bool, and a project's settings a list again, so the JSON is the same in every
    # process (hash() is salted per process).
    return list(dataclasses.astuple(settings))


def cache_key(sha: bytes, context: bytes, version: str) -> bytes:
    """The 20-byte key of a blob (hex ``sha``) in a context (:meth:`ScopeContexts.of`)
    for the analyzer ``version``."""
    digest = hashlib.blake2b(digest_size=20)
    for field in (VALUE_FORMAT, version.encode(), sha, context):
        digest.update(len(field).to_bytes(4, "big") + field)
    return digest.digest()


def encode_file(found: TestFile | None) -> bytes:
    """The value of a file ``analyze_file`` returned ``found`` for (None: no tests)."""
    if found is None:
        return b"0"
    value: list[object] = [found.framework, found.language, found.config_note]
    value += [_tests(found.tests), _suites(found.suites)]
    return json.dumps(value, separators=_COMPACT).encode()


def encode_parse_error(message: str, phase: str = "parse") -> bytes:
    """The value of a file that does not parse (or is refused in ``phase``), with the
    ``ScanError`` message."""
    if phase != "parse":
        return json.dumps([phase, message], separators=_COMPACT).encode()
    return json.dumps(message).encode()


def _tests(tests: tuple[TestCase, ...]) -> list[list[object]]:
    return [
        [t.name, t.line] if t.status is TestStatus.ACTIVE else [t.name, t.line, t.status.value]
        for t in tests
    ]


def _suites(suites: tuple[TestSuite, ...]) -> list[list[object]]:
    return [[s.name, s.line, _tests(s.tests), _suites(s.suites)] for s in suites]


def decode(value: bytes, path: str) -> Outcome:
    """The outcome ``value`` encodes for the file at ``path``.

    Raises :class:`UndecodableValue` for anything else, including a test file whose
    language is not ``path``'s (a value edited, or under a wrong key).
    """
    try:
        data = json.loads(value)
        if data == 0 and type(data) is int:
            return None
        if type(data) is str:
            return ScanError(path, "parse", data)
        if type(data) is list and len(data) == 2:
            phase, message = data
            if type(phase) is not str or type(message) is not str:
                raise UndecodableValue("not a scan error's fields")
            return ScanError(path, phase, message)
        framework, language, note, tests, suites = data
        if language != language_of(path) or type(framework) is not str or type(note) is not str:
            raise UndecodableValue("not a test file's fields")
        return TestFile(path, framework, language, _read_suites(suites), _read_tests(tests), note)
    except UndecodableValue:
        raise
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        # ValueError covers JSON that does not parse and lists of the wrong length.
        raise UndecodableValue(f"{type(exc).__name__}: {exc}") from None


def _read_tests(items: object) -> tuple[TestCase, ...]:
    if type(items) is not list:
        raise TypeError("tests")
    found = []
    for item in items:
        if type(item) is not list:
            raise TypeError("test")
        if len(item) == 2:
            name, line = item
            status = TestStatus.ACTIVE
        else:
            name, line, word = item
            status = _STATUS[word]
        if type(name) is not str or type(line) is not int:
            raise TypeError("test fields")
        found.append(TestCase(name, line, status))
    return tuple(found)


def _read_suites(items: object) -> tuple[TestSuite, ...]:
    if type(items) is not list:
        raise TypeError("suites")
    found = []
    for item in items:
        if type(item) is not list:
            raise TypeError("suite")
        name, line, tests, suites = item
        if type(name) is not str or type(line) is not int:
            raise TypeError("suite fields")
        found.append(TestSuite(name, line, _read_suites(suites), _read_tests(tests)))
    return tuple(found)
