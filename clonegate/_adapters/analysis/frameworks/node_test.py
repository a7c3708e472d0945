"""node:test, Node's built-in runner: the files ``node --test`` runs, by node's default
patterns or by the literal arguments of ``node --test`` in ``package.json``'s scripts.

node:test has no globals: a file runs its tests only through ``node:test`` (or ``test``,
its port to npm), so a file that imports neither is never node:test's (``needs_import``),
unless it makes tests through a test context it is given (``const test = t.test`` in a
helper, its signal).
Node's default patterns (Node 22 and later; the TypeScript ones since types are
stripped by default) are ``**/*.test.*``, ``**/*-test.*``, ``**/*_test.*``,
``**/test-*.*``, ``**/test.*`` and ``**/test/**/*.*``, each with the extensions
``js mjs cjs ts mts cts``. Arguments after ``--test`` are globs, matched as written from
the package's directory (since Node 21 a directory is not searched). An argument that
is not literal (``$VAR``, ``$(…)``, a backquote) leaves node's defaults, with a note:
the rules are then unknown, and an import of node:test makes a file its test file
(ADR 0004's import rule).
"""

from __future__ import annotations

import dataclasses
import re
import shlex

from ..globs import check_globs, glob_matches
from ..javascript_node import CONTEXT_SIGNAL
from ..patterns import linear, searchable
from .definition import Framework, Scope, Settings
from .js_config import scripts

_EXTENSIONS = "{js,mjs,cjs,ts,mts,cts}"
DEFAULT_FILES = (
    *(f"**/{name}.{_EXTENSIONS}" for name in ("*.test", "*-test", "*_test", "test-*", "test")),
    f"**/test/**/*.{_EXTENSIONS}",
)
DEFAULTS = Settings(files=DEFAULT_FILES)
# DEFAULT_FILES as one expression: every JavaScript file of a tree is asked.
_EXTENSION = r"\.[cm]?[jt]s"
DEFAULT_PATTERN = re.compile(
    rf"(?:.*/)?(?:[^/]*[._-]test|test-[^/]*|test){_EXTENSION}"
    rf"|(?:.*/)?test/(?:.*/)?[^/]+{_EXTENSION}"
)
# A file of node:test names it: its import or require (``test``, the npm port, only as a
# whole module name), or a test context's ``.test``. Fixtures and type tests under
# ``test/`` (fastify's ``test/types/*.tst.ts``) are then not parsed.
HINT = re.compile(rb"""node:test|(?:from|require\()\s*['"]test['"]|\.test\b""")
# node options that take the next word as their value (not a test file argument).
_VALUED = frozenset(
    {
        "-r",
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
        "-C",
        "--conditions",
        "--env-file",
        "--env-file-if-exists",
        "--input-type",
        "--disable-warning",
        "--test-reporter",
        "--test-reporter-destination",
        "--test-name-pattern",
        "--test-skip-pattern",
        "--test-concurrency",
        "--test-timeout",
        "--test-shard",
        "--test-coverage-include",
        "--test-coverage-exclude",
        "--test-coverage-lines",
        "--test-coverage-branches",
        "--test-coverage-functions",
        "--test-isolation",
        "--watch-path",
        "--experimental-config-file",
    }
)
# In one command of a script (split at &&, || and ;): node and its arguments, when
# they hold --test (``c8 node --test``, ``cross-env X=1 node --test 'a/**'``).
_INVOCATION = linear(r"(?:^|[\s&|(])(?:\S*/)?node(?:\.exe)?\s+(.*--test(?:\s.*)?)$")
_COMMANDS = re.compile(r"&&|\|\||;")
_NOT_LITERAL = re.compile(r"[$`]")


def read_config(name: str, content: bytes, defaults: Settings) -> Settings | None:
    """The files of ``node --test`` in ``package.json``'s scripts, where literal."""
    files: list[str] = []
    for script in scripts(content):
        for command in _COMMANDS.split(script):
            match = _INVOCATION.search(searchable(command.strip()))
            arguments = _test_arguments(match.group(1) or "") if match else ()
            if arguments is None:
                note = f"{name}: node --test's arguments are not literal: node's default patterns"
                return dataclasses.replace(defaults, note=note)
            files.extend(arguments)
    found = tuple(dict.fromkeys(files))
    if not found or found == defaults.files:
        return defaults
    check_globs(found, "node --test argument")
    return dataclasses.replace(defaults, files=found)


def _test_arguments(arguments: str) -> tuple[str, ...] | None:
    """The files one ``node …`` command runs as tests: its globs after ``--test``, node's
    defaults for ``--test`` alone, nothing if it runs a script (``node x.js --test``:
    the script's own argument); None if an argument is not literal."""
    try:
        words = shlex.split(arguments)
    except ValueError:
        return None
    testing = False
    found: list[str] = []
    remaining = iter(words)
    for word in remaining:
        option, equals, _ = word.partition("=")
        if word == "--test":
            testing = True
        elif option in _VALUED and not equals:
            next(remaining, "")
        elif not word.startswith("-"):
            if not testing:
                return ()  # node runs this script; what follows is its own
            if _NOT_LITERAL.search(word):
                return None
            found.append(word.removeprefix("./"))
    if not testing:
        return ()
    return tuple(found) or DEFAULT_FILES


def selects(path: str, scope: Scope) -> bool:
    relative = scope.relative(path)
    files = scope.settings.files
    if files == DEFAULT_FILES:
        return DEFAULT_PATTERN.fullmatch(relative) is not None
    return any(glob_matches(pattern, relative) for pattern in files)


FRAMEWORK = Framework(
    name="node-test",
    family="javascript",
    selects=selects,
    defaults=DEFAULTS,
    imports=("node:test",),
    exact_imports=("test",),
    # Scripts that run ``node --test`` (``--test-reporter`` alone names nothing).
    config_signs=(("package.json", b" --test "), ("package.json", b' --test"')),
    read_config=read_config,
    signals=frozenset({CONTEXT_SIGNAL}),
    needs_import=True,
    hint=HINT,
    trusts_imports=True,
)
