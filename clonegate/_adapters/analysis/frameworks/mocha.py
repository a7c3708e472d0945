"""mocha: ``./test/*.{js,cjs,mjs}`` by default, or the ``spec`` of ``.mocharc.*`` (the
literals of ``.mocharc.js``: :mod:`.js_literals`), of ``package.json``'s ``"mocha"``,
or of the ``mocha`` command in its ``scripts``.

Only in a project that uses mocha (a ``.mocharc.*``, or ``package.json`` naming
it): elsewhere ``./test`` is just a folder.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from typing import Any

from ..globs import check_globs, glob_matches
from ..javascript import MOCHA_TDD_CALLS
from ..patterns import linear, searchable
from .definition import Framework, Scope, Settings
from .js_config import computed_note, json_of, package_key, scripts, strings
from .js_literals import Object, config_of, literal_strings

EXTENSIONS = ("js", "cjs", "mjs")
DEFAULTS = Settings(files=("test/*.{js,cjs,mjs}",))
# mocha options that take a value (the value is not a spec).
_VALUED = frozenset(
    {
        "--config",
        "--require",
        "-r",
        "--reporter",
        "-R",
        "--reporter-option",
        "--reporter-options",
        "-O",
        "--ui",
        "-u",
        "--timeout",
        "-t",
        "--slow",
        "-s",
        "--retries",
        "--jobs",
        "-j",
        "--grep",
        "-g",
        "--fgrep",
        "-f",
        "--ignore",
        "--exclude",
        "--file",
        "--package",
        "--extension",
        "--spec",
        "--node-option",
        "-n",
        "--import",
        "--loader",
    }
)
# In one command of a script (split at &&, || and ;): mocha and its arguments.
_INVOCATION = linear(r"(?:^|[\s&|(])(?:\S*/)?_?mocha(?:\s+(.*))?$")
_COMMANDS = re.compile(r"&&|\|\||;")
_KEY = re.compile(r"([A-Za-z-]+)\s*:")


def read_config(name: str, content: bytes, defaults: Settings) -> Settings | None:
    options: dict[str, Any] = {}
    note = ""
    if name == "package.json":
        config = package_key(content, "mocha")
        options = config if isinstance(config, dict) else {}
        for script in scripts(content):
            for command in _COMMANDS.split(script):
                if (match := _INVOCATION.search(searchable(command.strip()))) is not None:
                    _merge(options, _command_options(match.group(1) or ""))
    elif name.endswith((".json", ".jsonc")):
        options = json_of(content, comments=True)
    elif name.endswith((".yaml", ".yml")):
        options = _yaml_options(content.decode("utf-8", "replace"))
    else:  # .mocharc.js / .cjs / .mjs: code; its literal spec, extension and recursive
        config = config_of(name, content)
        computed = ["config"] if not isinstance(config, Object) else []
        for key in ("spec", "extension"):
            found = literal_strings(config.get(key)) if isinstance(config, Object) else ()
            if found is None:
                computed.append(key)
            options[key] = list(found or ())
        recursive = config.get("recursive") if isinstance(config, Object) else None
        options["recursive"] = recursive is True
        note = computed_note(name, computed, "mocha")
    return _settings(options, defaults, note)


def _merge(into: dict[str, Any], more: dict[str, Any]) -> None:
    into["spec"] = [*strings(into.get("spec")), *strings(more.get("spec"))]
    into["recursive"] = bool(into.get("recursive") or more.get("recursive"))
    into["extension"] = [*strings(into.get("extension")), *strings(more.get("extension"))]


def _command_options(arguments: str) -> dict[str, Any]:
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()
    spec: list[str] = []
    extension: list[str] = []
    recursive = False
    words_iter = iter(words)
    for word in words_iter:
        option, _, value = word.partition("=")
        if word == "--recursive":
            recursive = True
        elif option in _VALUED:
            value = value or next(words_iter, "")
            if option == "--spec":
                spec.append(value)
            elif option == "--extension":
                extension.append(value)
        elif not word.startswith("-"):
            spec.append(word)
    return {"spec": spec, "recursive": recursive, "extension": extension}


def _yaml_options(text: str) -> dict[str, Any]:
    """``spec``, ``extension`` (scalars, ``[a, b]`` or ``- a`` lists) and ``recursive``."""
    options: dict[str, Any] = {}
    key = None
    for line in text.splitlines():
        item = _list_item(line)
        if item and key:
            options.setdefault(key, []).append(item)
            continue
        entry = _KEY.match(line)
        key = None
        if not entry:
            continue
        name, value = entry[1], line[entry.end() :].strip()
        if name == "recursive":
            options[name] = value == "true"
        elif name in ("spec", "extension"):
            values = re.findall(r"[^\[\],'\"\s]+", value)
            options[name] = values
            key = name if not values else None
    return options


def _list_item(line: str) -> str | None:
    """The value of an indented ``- value`` line (quotes dropped), or None if it is not
    one or holds a quote or ``#`` inside. String operations: the regular expression
    this was tried lazily at every character (minutes on a line of 40,000 spaces)."""
    if not line[:1].isspace() or not (rest := line.lstrip()).startswith("-"):
        return None
    value = rest[1:].lstrip()
    value = value[1:] if value[:1] in ("'", '"') else value
    value = value.rstrip()
    value = value[:-1] if value[-1:] in ("'", '"') else value  # spaces inside quotes stay
    return value if value and not any(c in value for c in "'\"#") else None


def _settings(options: dict[str, Any], defaults: Settings, note: str) -> Settings:
    extensions = tuple(e.lstrip(".") for e in strings(options.get("extension"))) or EXTENSIONS
    recursive = bool(options.get("recursive"))
    files = tuple(
        _glob(spec, extensions, recursive) for spec in strings(options.get("spec")) if spec
    )
    check_globs(files, "spec")
    return dataclasses.replace(defaults, files=files or defaults.files, note=note)


def _glob(spec: str, extensions: tuple[str, ...], recursive: bool) -> str:
    """A spec as a glob: a directory means its files of mocha's extensions."""
    spec = spec.removeprefix("./").rstrip("/")
    last = spec.rsplit("/", 1)[-1]
    if any(c in spec for c in "*?{[") or "." in last:
        return spec
    joined = "{" + ",".join(extensions) + "}" if len(extensions) > 1 else extensions[0]
    return f"{spec}/{'**/' if recursive else ''}*.{joined}"


def selects(path: str, scope: Scope) -> bool:
    relative = scope.relative(path)
    return any(glob_matches(pattern, relative) for pattern in scope.settings.files)


FRAMEWORK = Framework(
    name="mocha",
    family="javascript",
    selects=selects,
    defaults=DEFAULTS,
    imports=("mocha",),
    config_files=tuple(
        f".mocharc.{e}" for e in ("js", "cjs", "mjs", "json", "jsonc", "yaml", "yml")
    ),
    config_signs=(("package.json", b'"mocha"'),),
    read_config=read_config,
    signals=MOCHA_TDD_CALLS,
    scoped=True,
    trusts_imports=True,
)
