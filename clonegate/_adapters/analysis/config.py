"""Framework config files by directory: which frameworks cover a file, with which
settings (ADR 0004).

Every config file is read once, when the scopes are made, so the scopes hold plain
data: they are pickled to the worker processes that scan parts of one commit. The
nearest config above a file decides; a config that only names a framework
(``conftest.py``) puts the file in its scope but leaves the settings to the nearest
one that has them.

A config that cannot be read or understood (not UTF-8, not JSON, nested too deep, a
pattern RE2 cannot run...) leaves its framework's defaults, with a note on each file
it would have decided, and is a :class:`ScanError` of its own in :attr:`errors`
(phase ``config``, or ``read``): what the scan could not take in is listed, never
lost, and nothing a config holds stops the scan (ADR 0012).
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Callable, Iterable

from ..._domain.inventory import ScanError
from .frameworks import FRAMEWORKS, by_name, dotnet, of_family
from .frameworks.definition import Framework, Reading, Scope, Settings
from .problems import describe, retire_after

__all__ = ["ConfigScopes"]

# Directories holding configs, nearest first, each with (framework, settings or None,
# precedence) for each config there.
_Chain = tuple[tuple[str, list[tuple[str, "Settings | None", int]]], ...]

_CONFIG_NAMES = frozenset(
    name
    for framework in FRAMEWORKS
    for name in (*framework.config_files, *(n for n, _ in framework.config_signs))
)

# ConfigScopes' answers kept per path or directory: rebuilt, never pickled.
_MEMOS = ("_chains", "_scopes", "_trusting", "_importing", "_frameworks", "_selecting")


class ConfigScopes:
    """Which frameworks run which files of one commit; see the module docstring."""

    def __init__(
        self,
        paths: Iterable[str],
        read: Callable[[str], bytes],
        read_project: Callable[[str], bytes] | None = None,
    ) -> None:
        """``read(path)`` gives a config's content; ``read_project(path)`` a C# project
        file's (``read`` if None), which should refuse one past
        :data:`.unread.MAX_PROJECT_BYTES` before inflating it: a real one is a few KiB,
        and every one of a commit is read."""
        # directory -> (framework, settings or None, precedence) for each config there,
        # in path order; precedence: the config's place in its framework's own order
        # (pytest.ini before pyproject.toml before tox.ini before setup.cfg)
        self._by_directory: dict[str, list[tuple[str, Settings | None, int]]] = {}
        # (path, phase) -> message: a package.json read by three frameworks is one error.
        problems: dict[tuple[str, str], str] = {}
        mains = set()
        projects = _Projects()
        # Within a directory a framework's own config file comes before a mention in
        # package.json: fp-ts's vite.config.ts selects its tests for vitest, while a
        # leftover "mocha" script in its package.json names mocha too.
        for path in sorted(paths, key=_config_order):
            name = posixpath.basename(path)
            if name == "main.rs":
                mains.add(posixpath.dirname(path))
            elif dotnet.is_project_file(name):
                projects.add(path, read_project or read, problems)
            if name in _CONFIG_NAMES:
                self._add_config(path, name, read, problems)
        self._mains = frozenset(mains)
        self._projects = frozenset(projects.projects)
        self._test_projects = projects.test_projects()
        self.errors = tuple(ScanError(p, phase, m) for (p, phase), m in problems.items())
        # Asked for every file of the tree, several times: once per directory is enough.
        self._chains: dict[str, _Chain] = {}
        self._scopes: dict[tuple[str, str], Scope] = {}
        self._trusting: dict[tuple[str, str], tuple[Framework, ...]] = {}
        self._importing: dict[tuple[str, str], tuple[Framework, ...]] = {}
        self._frameworks: dict[tuple[str, str], tuple[tuple[Framework, Scope], ...]] = {}
        # A file's own: asked by the listing, the scan's gate and the framework's choice.
        self._selecting: dict[tuple[str, str], tuple[Framework, ...]] = {}

    def _add_config(
        self,
        path: str,
        name: str,
        read: Callable[[str], bytes],
        problems: dict[tuple[str, str], str],
    ) -> None:
        """File the config at ``path`` under its directory for each framework it is
        one of, read once (only if some framework takes it), with what it could not
        say in ``problems``."""
        content: bytes | None = None
        for framework in FRAMEWORKS:
            signs = [sign for file, sign in framework.config_signs if file == name]
            if name not in framework.config_files and not signs:
                continue
            if content is None:
                try:
                    content = read(path)
                except Exception as exc:  # too large, a corrupt object: names nothing
                    retire_after(exc)
                    problems[path, "read"] = describe(exc)
                    content = b""
            if signs and not any(sign in content for sign in signs):
                continue
            settings, problem = _settings(framework, name, content)
            if problem:
                problems.setdefault((path, "config"), problem)
            order = [*framework.config_files, *(file for file, _ in framework.config_signs)]
            entries = self._by_directory.setdefault(posixpath.dirname(path), [])
            entries.append((framework.name, settings, order.index(name)))

    # The memos are rebuilt where the scopes are used, not pickled to the workers.
    def __getstate__(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if k not in _MEMOS}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state, **{name: {} for name in _MEMOS})

    def scope_for(self, path: str, framework: Framework) -> Scope:
        """The settings that apply to ``path`` for ``framework``, and where they are from."""
        key = (posixpath.dirname(path), framework.name)
        scope = self._scopes.get(key)
        if scope is None:
            owner = framework.settings_from or framework.name
            scope = self._scopes[key] = self._scope(key[0], owner, framework.defaults)
        return scope

    def _scope(self, directory: str, owner: str, defaults: Settings) -> Scope:
        for config_directory, entries in self._chain(directory):
            found = [(rank, s) for name, s, rank in entries if name == owner and s is not None]
            if found:
                settings = min(found, key=lambda f: f[0])[1]
                return Scope(config_directory, settings, *self._layout())
        return Scope(None, defaults, *self._layout())

    def _layout(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        return self._mains, self._projects, self._test_projects

    def covers(self, path: str, framework: Framework) -> bool:
        """Whether a config file naming ``framework`` is in ``path``'s directories."""
        return any(
            name == framework.name for _, entries in self._upwards(path) for name, _, _ in entries
        )

    def configured(self, path: str, family: str) -> bool:
        """Whether a config file of some framework of ``family`` covers ``path``."""
        return any(self.covers(path, framework) for framework in of_family(family))

    def selecting(self, path: str, family: str) -> tuple[Framework, ...]:
        """The frameworks of ``family`` whose own rules run ``path``."""
        found = self._selecting.get((path, family))
        if found is None:
            found = self._selecting[path, family] = tuple(
                framework
                for framework, scope in self._in_scope(path, family)
                if framework.selects(path, scope)
            )
        return found

    def _in_scope(self, path: str, family: str) -> tuple[tuple[Framework, Scope], ...]:
        """The frameworks of ``family`` that may run files of ``path``'s directory, with
        their scope there: the same for every file of it, and asked for each."""
        key = (posixpath.dirname(path), family)
        found = self._frameworks.get(key)
        if found is None:
            found = self._frameworks[key] = tuple(
                (framework, self.scope_for(path, framework))
                for framework in of_family(family)
                if not framework.scoped or self.covers(path, framework)
            )
        return found

    def trusting(self, path: str, family: str) -> tuple[Framework, ...]:
        """The frameworks of ``family`` that take an import as the rule for ``path`` (ADR
        0004's import rule): they trust imports and their rules there are not known,
        because their config in scope is code or unreadable (its settings carry a note),
        or because they select files only below a config and none is in scope (mocha
        run by a command we do not see)."""
        key = (posixpath.dirname(path), family)  # all of it depends on the directory
        found = self._trusting.get(key)
        if found is None:
            found = self._trusting[key] = tuple(
                framework
                for framework in of_family(family)
                if framework.trusts_imports
                and (
                    self.scope_for(path, framework).settings.note
                    if self.covers(path, framework)
                    else framework.scoped
                )
            )
        return found

    def read_for_imports(self, path: str, family: str) -> tuple[Framework, ...]:
        """Those of :meth:`trusting` for which ``path`` is read although no rule selects
        it: the ones a config in scope names (so they are in use there). A framework no
        config names is trusted among the files some rule selects only: reading every
        file of every repository for a name it rarely holds would cost more than it
        finds."""
        key = (posixpath.dirname(path), family)  # as trusting's, the directory's alone
        found = self._importing.get(key)
        if found is None:
            trusted = self.trusting(path, family)
            found = self._importing[key] = tuple(f for f in trusted if self.covers(path, f))
        return found

    def choose(self, path: str, family: str, reading: Reading) -> Framework | None:
        """The framework of a file its reader has read, or None if no framework runs it.

        In order: a framework the file imports (whose rules run the file, or which
        trusts the import there: :meth:`trusting`), then the nearest config's, then the
        file's signals, then the family's fallback; always among the frameworks whose
        rules run the file, and never one whose required signal or import the file
        lacks (ADR 0004).
        """
        eligible = [f for f in FRAMEWORKS if _eligible(f, family, reading)]
        running = set(self.selecting(path, family))
        for framework in eligible:
            if framework.imported_by(reading.imports) and (
                framework in running or framework in self.trusting(path, family)
            ):
                return framework
        runs = [f for f in eligible if f in running]
        nearest = self._nearest_config(path, reading, runs)
        if nearest is not None:
            return nearest
        for framework in runs:
            if framework.signals & reading.signals:
                return framework
        return next((f for f in runs if f.fallback), None)

    def _nearest_config(
        self, path: str, reading: Reading, runs: list[Framework]
    ) -> Framework | None:
        """The framework of ``runs`` that the nearest config above ``path`` names."""
        for _, entries in self._upwards(path):
            # In one directory, a framework the file's content names comes first: a
            # Playwright test using a local fixtures module's ``test.describe`` beside
            # a jest config whose defaults run it too.
            named = sorted(
                (by_name(name) for name, _, _ in entries),
                key=lambda f: not (f.signals & reading.signals),
            )
            for framework in named:
                if framework in runs:
                    return framework
        return None

    def _upwards(self, path: str) -> _Chain:
        """The directories holding configs above ``path``, nearest first, with them."""
        return self._chain(posixpath.dirname(path))

    def _chain(self, start: str) -> _Chain:
        chain = self._chains.get(start)
        if chain is None:
            found = []
            directory = start
            while True:
                entries = self._by_directory.get(directory)
                if entries:
                    found.append((directory, entries))
                if not directory:
                    break
                directory = posixpath.dirname(directory)
            chain = self._chains[start] = tuple(found)
        return chain


class _Projects:
    """C#'s project files met while listing (:mod:`.frameworks.dotnet`): each read
    once for its signs, only the answer kept."""

    def __init__(self) -> None:
        self.projects: set[str] = set()
        self._signed: set[str] = set()
        self._props: set[str] = set()

    def add(
        self, path: str, read: Callable[[str], bytes], problems: dict[tuple[str, str], str]
    ) -> None:
        directory, name = posixpath.split(path)
        if name != dotnet.BUILD_PROPS:
            self.projects.add(directory)
        try:
            content = read(path)
        except Exception as exc:  # too large, a corrupt object: no test project by it
            retire_after(exc)
            problems[path, "read"] = describe(exc)
            return
        if dotnet.names_a_sign(content):
            (self._props if name == dotnet.BUILD_PROPS else self._signed).add(directory)

    def test_projects(self) -> frozenset[str]:
        return dotnet.test_projects(self.projects, self._signed, self._props)


def _eligible(framework: Framework, family: str, reading: Reading) -> bool:
    """Whether ``framework`` may run a file of ``family`` that its reader read as
    ``reading``: it has the signal it requires, and the import it needs (or a signal)."""
    return (
        framework.reads(family)
        and (framework.requires is None or framework.requires in reading.signals)
        and (
            not framework.needs_import
            or framework.imported_by(reading.imports)
            or not framework.signals.isdisjoint(reading.signals)
        )
    )


def _config_order(path: str) -> tuple[str, bool, str]:
    directory, name = posixpath.split(path)
    return directory, name == "package.json", name


def _settings(framework: Framework, name: str, content: bytes) -> tuple[Settings | None, str]:
    """The config's settings for ``framework``, and why it could not be read ("" if it was)."""
    if framework.read_config is None:
        return framework.defaults, ""
    try:
        return framework.read_config(name, content, framework.defaults), ""
    except Exception as exc:  # anything a hostile config can make a reader raise
        retire_after(exc)
        # A config its framework would refuse too: the defaults, said so.
        note = f"{name} could not be read: defaults"
        return dataclasses.replace(framework.defaults, note=note), describe(exc)
