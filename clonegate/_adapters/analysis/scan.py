"""Scanning one commit of a cloned repository: runs inside a worker process (ADR 0004).

Files are read from the object store at the commit's tree, never from the working
tree, so a bare clone is enough and a symlink can never lead outside the repository:
symlinks and submodules are tree entries of their own kind, and they are skipped.

Nothing in the repository stops the scan (ADR 0012): a tree nested too deep, a
config or a file that a reader cannot take in, or that is past one of the bounds
(:mod:`.problems`), is a :class:`ScanError` naming it, and the rest is scanned.
"""

from __future__ import annotations

import gc
import stat
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..._domain.inventory import ScanError, TestFile
from . import cpp, csharp, go, java, javascript, kotlin, php, python, ruby, rust, swift
from .blobs import BlobTooLarge, blob_reader
from .cache_keys import Outcome, ScopeContexts, encode_file, encode_parse_error
from .config import ConfigScopes
from .detect import FAMILY, MAX_FILE_BYTES, language_of, skipped_directory
from .frameworks import KEEPS_UNNAMED
from .frameworks.definition import Framework, Reading
from .memo import LISTINGS, OUTCOMES
from .problems import Refused, check_size, describe, retire_after
from .results import Part, PartResult, ScanResult, split
from .unread import MAX_PROJECT_BYTES, NOTHING_UNREAD, UnreadFiles, unread_files

# Directories inside directories, from the root. dulwich's own walk raised
# MaxTreeDepthExceeded (and lost the repository) past 1,280; real trees have tens.
MAX_TREE_DEPTH = 256
_OVER_CAP = "MemoryError: the file needs more memory than the analysis worker's cap"

# One reader per language family: it parses a file once, whatever its framework.
READERS: dict[str, Callable[[str, bytes, str], Reading | None]] = {
    "python": python.read,
    "javascript": javascript.read,
    "go": go.read,
    "java": java.read,
    "kotlin": kotlin.read,
    "ruby": ruby.read,
    "rust": rust.read,
    "swift": swift.read,
    "php": php.read,
    "cpp": cpp.read,
    "csharp": csharp.read,
}


@dataclass(frozen=True, slots=True)
class Listing:
    """One pass over a commit's tree: the files to parse, and what decides their framework.

    Plain data, pickled to the worker processes that each scan a part of the candidates.
    ``contexts``: each candidate's cache context (:meth:`.cache_keys.ScopeContexts.of`),
    in the candidates' order; worked out here, in the worker, to keep the parent cheap.
    ``errors``: what the listing could not take in (a tree too deep, a config).
    ``unread``: files that look like tests of a language or framework not read
    (:mod:`.unread`).
    """

    candidates: Part
    contexts: tuple[bytes, ...]
    scopes: ConfigScopes
    files_scanned: int
    files_per_language: dict[str, int]
    errors: tuple[ScanError, ...] = ()
    unread: UnreadFiles = NOTHING_UNREAD


def scan_commit(repo_path: str, commit: str) -> ScanResult:
    """The inventory of ``commit`` in the repository at ``repo_path`` (bare or not), in one go."""
    listing = list_commit(repo_path, commit)
    return ScanResult.merge(listing, [scan_part(repo_path, listing.candidates, listing.scopes)])


def list_or_scan(
    repo_path: str, commit: str, processes: int, recall: bool = False
) -> Listing | ScanResult:
    """The scan of ``commit`` when its candidates make one part (:func:`.results.split`),
    else its listing, for the parent to split among ``processes`` workers.

    Most repositories have fewer than two parts' worth of test files: one job then
    lists and scans them, and the parent neither waits for a second job nor unpickles
    a listing (which would load every framework's definition in it). ``recall``: as
    :func:`list_commit`'s and :func:`scan_part`'s.
    """
    listing = list_commit(repo_path, commit, recall)
    if not listing.candidates:
        return ScanResult.merge(listing, [])
    if len(split(listing.candidates, processes)) > 1:
        return listing
    candidates, scopes, contexts = listing.candidates, listing.scopes, listing.contexts
    part = scan_part(repo_path, candidates, scopes, contexts=contexts, recall=recall)
    return ScanResult.merge(listing, [part])


def list_commit(repo_path: str, commit: str, recall: bool = False) -> Listing:
    """The candidate test files of ``commit``, and the config scopes that apply to them.

    ``recall``: a tree this process has listed already (with ``recall``) is not listed
    again (:mod:`.memo`: the analyzer's served workers)."""
    from dulwich.repo import Repo

    with Repo(repo_path) as repo:
        tree_id = repo[commit.encode("ascii")].tree  # type: ignore[attr-defined]
        listing = LISTINGS.recall(tree_id) if recall else None
        if listing is None:
            listing = _list_tree(repo.object_store, tree_id)
            if recall:
                LISTINGS.keep(tree_id, listing)
        return listing


def _list_tree(store: Any, tree_id: bytes) -> Listing:
    """:func:`list_commit`'s listing of the tree ``tree_id`` in ``store``."""
    blobs, tree_errors = _regular_files(store.get_raw, tree_id)
    read = blob_reader(store, MAX_FILE_BYTES)
    per_language = Counter(lang for p in blobs if (lang := language_of(p)) is not None)
    visible = [p for p in sorted(blobs) if not skipped_directory(p)]
    read_project = blob_reader(store, MAX_PROJECT_BYTES)
    scopes = ConfigScopes(
        visible, lambda path: read(blobs[path]), lambda path: read_project(blobs[path])
    )
    contexts = ScopeContexts(scopes)
    # A file has a context exactly when it is a candidate (is_candidate).
    found = [(p, context) for p in visible if (context := contexts.of(p)) is not None]
    candidates = {p for p, _ in found}

    def is_read(path: str) -> bool:
        # A candidate that only node:test's rules or an import could make ours is
        # read only if its bytes say so (AVA's test/a.js is not node:test's).
        if path not in candidates:
            return False
        try:
            return _parsed(path, read(blobs[path]), scopes)
        except BlobTooLarge:
            return True  # read, as far as this goes: a scan error of its own

    unread = unread_files(visible, is_read, lambda p: read_project(blobs[p]))
    return Listing(
        candidates=tuple((p, blobs[p]) for p, _ in found),
        contexts=tuple(context for _, context in found),
        scopes=scopes,
        files_scanned=len(blobs),
        files_per_language=dict(sorted(per_language.items())),
        errors=(*tree_errors, *scopes.errors, *unread.errors),
        unread=unread,
    )


def _regular_files(
    load: Callable[[Any], tuple[int, bytes]], tree_id: bytes
) -> tuple[dict[str, bytes], list[ScanError]]:
    """path -> blob sha of the regular files under ``tree_id`` (not symlinks, S_IFLNK,
    nor submodules, gitlinks), and the trees that could not be listed: one nested
    deeper than :data:`MAX_TREE_DEPTH`, one that is missing or not a tree.

    ``load(sha)`` gives an object's type number and content (the store's ``get_raw``):
    entries are read from a tree's content as dulwich's ``Tree`` reads them, without
    making the object, which took half of the walk."""
    blobs: dict[str, bytes] = {}
    errors: list[ScanError] = []
    stack = [(b"", tree_id, 0)]  # depth first, without recursion
    while stack:
        prefix, sha, depth = stack.pop()
        shown = prefix.rstrip(b"/").decode("utf-8", "surrogateescape") or "."
        try:
            entries = _tree_entries(*load(sha))
        except Exception as exc:  # missing or corrupt: the rest is still listed
            retire_after(exc)
            errors.append(ScanError(shown, "list", describe(exc)))
            continue
        too_deep = False
        for name, (mode, entry_sha) in entries:
            path = prefix + name
            if stat.S_ISDIR(mode):
                if depth < MAX_TREE_DEPTH:
                    stack.append((path + b"/", entry_sha, depth + 1))
                elif not too_deep:  # one error for the tree, its files still listed
                    too_deep = True
                    reason = f"directories nested deeper than {MAX_TREE_DEPTH} levels: not listed"
                    errors.append(ScanError(shown, "list", reason))
            elif stat.S_ISREG(mode):
                blobs[path.decode("utf-8", "surrogateescape")] = entry_sha
    return blobs, errors


def _tree_entries(type_num: int, content: bytes) -> list[tuple[bytes, tuple[int, bytes]]]:
    """A tree's ``(name, (mode, hex sha))`` in git's order, one per name (the last
    written), as ``Tree.iteritems`` gives them; ``TypeError`` for another object."""
    from dulwich.errors import ObjectFormatException
    from dulwich.objects import Tree, object_class, parse_tree

    if type_num != Tree.type_num:
        kind = object_class(type_num)
        raise TypeError(f"{kind.__name__ if kind else type_num} where a tree should be")
    try:
        entries = {name: (mode, sha) for name, mode, sha in parse_tree(content, 20)}
    except ValueError as exc:
        raise ObjectFormatException(exc) from exc
    # git's order, a directory's name as if it ended in "/" (dulwich's key_entry); a
    # tree as git writes it is in that order already, and the sort only checks it.
    return sorted(entries.items(), key=_git_order)


def _git_order(entry: tuple[bytes, tuple[int, bytes]]) -> bytes:
    name, (mode, _) = entry
    return name + b"/" if stat.S_ISDIR(mode) else name


def scan_part(
    repo_path: str,
    part: Part,
    scopes: ConfigScopes,
    encode: bool = False,
    contexts: tuple[bytes, ...] | None = None,
    recall: bool = False,
) -> PartResult:
    """Read and parse the files of ``part``; a file that fails becomes a :class:`ScanError`.

    ``encode``: return each file's outcome as its cache value instead (see
    :class:`PartResult`). ``recall`` (not with ``encode``): a file whose blob and
    context this process has parsed already (with ``recall``) is recalled, not read
    (:mod:`.memo`); ``contexts``: the part's (:attr:`Listing.contexts`), worked out
    here when not given.
    """
    from dulwich.repo import Repo

    with Repo(repo_path) as repo:
        read = blob_reader(repo.object_store, MAX_FILE_BYTES)
        if encode or not recall:
            return _scan(part, read, scopes, encode)
        if contexts is None:
            of = ScopeContexts(scopes).of
            contexts = tuple(of(path) or b"" for path, _ in part)
        return OUTCOMES.scan(
            part, contexts, lambda new, keep: _scan(new, read, scopes, False, keep)
        )


def _scan(
    part: Part,
    read: Callable[[bytes], bytes],
    scopes: ConfigScopes,
    encode: bool,
    keep: dict[tuple[str, bytes], bytes] | None = None,
) -> PartResult:
    # Parsing makes millions of short-lived objects and no cycles worth finding: the
    # cyclic collector cost about 40% of ast.parse on a Python-heavy repository.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _scan_files(part, read, scopes, encode, keep)
    finally:
        if collecting:
            gc.enable()


def _scan_files(
    part: Part,
    read: Callable[[bytes], bytes],
    scopes: ConfigScopes,
    encode: bool,
    keep: dict[tuple[str, bytes], bytes] | None,
) -> PartResult:
    """``keep``: each file's context, to keep what the content alone decides (its test
    file, no test, a parse error) in :data:`.memo.OUTCOMES`."""
    files: list[TestFile] = []
    errors: list[ScanError] = []
    values: list[bytes | None] = []
    bytes_read = parsed = 0
    for path, sha in part:
        try:
            data = read(sha)  # refuses a blob over the limit before inflating it
        except BlobTooLarge as exc:
            errors.append(ScanError(path, "read", str(exc)))
            values.append(None)  # a read error says nothing of the content: never cached
            continue
        except Exception as exc:  # a corrupt object must not stop the scan
            retire_after(exc)
            errors.append(ScanError(path, "read", f"{type(exc).__name__}: {exc}"))
            values.append(None)
            continue
        bytes_read += len(data)
        parsed += 1
        outcome: Outcome
        try:
            outcome = analyze_file(path, data, scopes)
        except MemoryError as exc:  # maybe the worker's cap: never cached
            retire_after(exc)
            errors.append(ScanError(path, "parse", describe(exc) if str(exc) else _OVER_CAP))
            values.append(None)
            continue
        except Exception as exc:  # whatever the bytes make a reader raise, the same each time
            phase = exc.phase if isinstance(exc, Refused) else "parse"
            if encode:
                values.append(encode_parse_error(describe(exc), phase))
                continue
            outcome = ScanError(path, phase, describe(exc))
            errors.append(outcome)
        else:
            if encode:
                values.append(encode_file(outcome))
            elif outcome is not None:
                files.append(outcome)
        if keep is not None and (context := keep.get((path, sha))):
            OUTCOMES.keep(sha, context, outcome, len(data))
    return PartResult(
        tuple(files), tuple(errors), bytes_read, parsed, tuple(values) if encode else ()
    )


def is_candidate(path: str, scopes: ConfigScopes) -> bool:
    """Whether some framework's own rules run ``path``, or one takes its import as the
    rule there (ADR 0004)."""
    language = language_of(path)
    if language is None:
        return False
    family = FAMILY[language]
    return bool(scopes.selecting(path, family) or scopes.read_for_imports(path, family))


def _may_import(data: bytes, frameworks: tuple[Framework, ...]) -> bool:
    """Whether ``data`` holds, after a quote, the name of a module that would name one
    of ``frameworks`` (``'vitest``, ``"@jest``): the word alone is in many comments."""
    return any(
        (quote + name).encode() in data
        for framework in frameworks
        for name in (*framework.imports, *framework.exact_imports)
        for quote in "'\"`"
    )


def _parsed(path: str, data: bytes, scopes: ConfigScopes) -> bool:
    """Whether a candidate's reader runs on it, from its path and bytes alone."""
    language = language_of(path)
    if language is None:
        return False
    family = FAMILY[language]
    selecting = scopes.selecting(path, family)
    if not selecting:  # a candidate only for an import: parsed if it holds one
        return _may_import(data, scopes.read_for_imports(path, family))
    # Only node:test's rules run it: parsed if it names node:test.
    return not all(f.needs_import for f in selecting) or _hinted(data, selecting)


def _hinted(data: bytes, frameworks: tuple[Framework, ...]) -> bool:
    return any(f.hint is None or f.hint.search(data) is not None for f in frameworks)


def analyze_file(path: str, data: bytes, scopes: ConfigScopes) -> TestFile | None:
    """The file's tests and framework, or None if it holds no test of a framework that
    runs it.

    Raises ``SyntaxError`` (and ``ValueError`` for bytes Python cannot read) for a file
    that does not parse, :class:`.problems.Refused` for one past a bound, and whatever
    else a hostile file makes a reader raise: :func:`scan_part` contains them all.
    """
    language = language_of(path)
    if language is None:
        return None
    family = FAMILY[language]
    check_size(data)  # before any parser holds memory for it
    if not _parsed(path, data, scopes):
        return None
    selecting = scopes.selecting(path, family)
    reading = READERS[family](path, data, language)
    if reading is None:
        return None
    framework = scopes.choose(path, family, reading)
    if framework is None and not _kept_unnamed(path, family, scopes, selecting):
        return None  # no framework runs it (a configured one would have been chosen)
    settings = scopes.scope_for(path, framework).settings if framework else None
    suites, tests = reading.outline(settings or python.DEFAULT_NAMING).freeze()
    if not tests and not any(True for s in suites for _ in s.all_tests()):
        return None
    name = framework.name if framework else "unknown"
    note = settings.note if settings else ""
    return TestFile(path, name, language, suites, tests, note)


def _kept_unnamed(
    path: str, family: str, scopes: ConfigScopes, selecting: tuple[Framework, ...]
) -> bool:
    """Whether a file no framework was chosen for is kept as ``unknown``: its family
    keeps those, no config covers it, and a framework runs it without an import."""
    return (
        family in KEEPS_UNNAMED
        and not scopes.configured(path, family)
        and not all(f.needs_import for f in selecting)  # they would run it only if imported
    )
