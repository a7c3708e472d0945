"""RSpec: ``spec/**/*_spec.rb``, or what a literal ``.rspec`` says (``--pattern``,
``--default-path``); its groups and examples are read by :mod:`..ruby`."""

from __future__ import annotations

import posixpath
import shlex

from ..globs import check_globs, glob_matches
from ..problems import Refused
from .definition import Framework, Scope, Settings

# RSpec's own defaults (RSpec::Core::Configuration: ``default_path``, ``pattern``).
DEFAULTS = Settings(files=("**/*_spec.rb",), roots=("spec",), interface="rspec")
_OPTIONS = {
    "--pattern": "files",
    "-P": "files",
    "--exclude-pattern": "excludes",
    "--default-path": "roots",
}
# Real ``.rspec`` files are a few lines. shlex grows a token by concatenation, in time
# quadratic in its length (9 s for one of 1 MiB, the 10 MiB a file may have: hours);
# this bounds it to a few hundredths of a second (ADR 0012).
MAX_CONFIG_BYTES = 64 * 1024


def read_config(name: str, content: bytes, defaults: Settings) -> Settings:
    """``.rspec``'s ``--pattern`` and ``--default-path``: one option or more a line, as
    RSpec splits them (shell words); a line with ERB (``<%``) is code: defaults, noted."""
    if len(content) > MAX_CONFIG_BYTES:
        raise Refused(f"{name} over {MAX_CONFIG_BYTES:,} bytes: not read", "config")
    source = content.decode("utf-8")
    if "<%" in source:
        return Settings(
            files=defaults.files,
            roots=defaults.roots,
            interface="rspec",
            note=f"{name} holds ERB: defaults",
        )
    values: dict[str, tuple[str, ...]] = {}
    words = shlex.split(source, comments=True)
    for index, word in enumerate(words):
        option, _, value = word.partition("=")
        if option not in _OPTIONS:
            continue
        if not value and index + 1 < len(words):
            value = words[index + 1]
        if option == "--default-path":
            values["roots"] = (posixpath.normpath(value.removeprefix("./")),)
        else:
            # RSpec wraps the pattern in braces: commas separate alternatives.
            values[_OPTIONS[option]] = tuple(p.strip().removeprefix("./") for p in _split(value))
    files = values.get("files", defaults.files)
    excludes = values.get("excludes", ())
    check_globs(files + excludes, "--pattern")
    roots = values.get("roots", defaults.roots)
    return Settings(files=files, roots=roots, excludes=excludes, interface="rspec")


def _split(pattern: str) -> list[str]:
    """``a,b`` into its alternatives; a comma inside braces stays (``{a,b}``)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(pattern):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(pattern[start:index])
            start = index + 1
    return [*parts, pattern[start:]]


def selects(path: str, scope: Scope) -> bool:
    """Under the default path of the ``.rspec`` above, the pattern relative to it (or
    to the project when it starts with the default path, as RSpec's
    ``file_glob_from``); with no ``.rspec``, below any ``spec`` directory."""
    settings = scope.settings
    if scope.directory is None:
        parts = path.split("/")
        return "spec" in parts[:-1] and path.endswith("_spec.rb")
    relative = scope.relative(path)
    return any(
        _matches(settings.files, root, relative) and not _matches(settings.excludes, root, relative)
        for root in settings.roots
    )


def _matches(patterns: tuple[str, ...], root: str, relative: str) -> bool:
    """Whether a pattern matches ``relative`` (from the project) as RSpec reads it below
    ``root``: from the project when it starts with the root, else from the root."""
    inside = posixpath.relpath(relative, root) if root not in ("", ".") else relative
    for pattern in patterns:
        if pattern.startswith(root + "/") or root in ("", "."):
            if glob_matches(pattern, relative):
                return True
        elif not inside.startswith("../") and glob_matches(pattern, inside):
            return True
    return False


FRAMEWORK = Framework(
    name="rspec",
    family="ruby",
    selects=selects,
    defaults=DEFAULTS,
    imports=("rspec", "spec_helper", "rails_helper"),
    config_files=(".rspec",),
    read_config=read_config,
    signals=frozenset({"rspec"}),
    fallback=True,
)
