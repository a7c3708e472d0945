"""Scanning one commit of a cloned repository: runs inside a worker process (ADR 0004).

Files are read from the object store at the commit's tree, never from the working
tree, so a bare clone is enough and a symlink can never lead outside the repository:
symlinks and submodules are tree entries of their own kind, and they are skipped.
"""

from __future__ import annotations

import ast
import stat
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from .._inventory import Inventory, ScanError, TestFile
from ._detect import (
    JS_LANGUAGES,
    MAX_FILE_BYTES,
    ConfigScopes,
    is_candidate,
    java_framework_from_imports,
    js_framework_from_imports,
    language_of,
    skipped_directory,
)
from ._go import outline_go
from ._java import java_imports, outline_java
from ._javascript import callee_roots, js_imports, outline_javascript
from ._outline import Outline
from ._python import has_testcase_class, outline_python, python_imports
from ._rust import outline_rust
from ._syntax import kit

JS_FRAMEWORKS = frozenset({"jest", "vitest", "mocha"})


@dataclass(frozen=True, slots=True)
class ScanResult:
    inventory: Inventory
    files_scanned: int
    bytes_read: int
    files_per_language: dict[str, int]


def scan_commit(repo_path: str, commit: str) -> ScanResult:
    """The inventory of ``commit`` in the repository at ``repo_path`` (bare or not)."""
    from dulwich.repo import Repo

    with Repo(repo_path) as repo:
        store = repo.object_store
        tree_id = repo[commit.encode("ascii")].tree  # type: ignore[attr-defined]
        blobs: dict[str, bytes] = {}
        for entry in store.iter_tree_contents(tree_id):
            if entry.path is None or entry.mode is None or entry.sha is None:
                continue
            if stat.S_ISREG(entry.mode):  # not symlinks (S_IFLNK) nor submodules (gitlinks)
                blobs[entry.path.decode("utf-8", "surrogateescape")] = entry.sha

        def read(path: str) -> bytes:
            return store[blobs[path]].as_raw_string()  # type: ignore[index]

        return _scan(blobs, read)


def _scan(blobs: dict[str, bytes], read: Callable[[str], bytes]) -> ScanResult:
    per_language = Counter(lang for p in blobs if (lang := language_of(p)) is not None)
    visible = [p for p in sorted(blobs) if not skipped_directory(p)]
    scopes = ConfigScopes(visible, read)
    files: list[TestFile] = []
    errors: list[ScanError] = []
    bytes_read = 0
    for path in visible:
        if not is_candidate(path):
            continue
        try:
            data = read(path)
        except Exception as exc:  # a corrupt object must not stop the scan
            errors.append(ScanError(path, "read", f"{type(exc).__name__}: {exc}"))
            continue
        if len(data) > MAX_FILE_BYTES:
            errors.append(ScanError(path, "read", f"larger than {MAX_FILE_BYTES} bytes: skipped"))
            continue
        bytes_read += len(data)
        try:
            found = analyze_file(path, data, scopes)
        except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError) as exc:
            errors.append(ScanError(path, "parse", _describe(exc)))
            continue
        if found is not None:
            files.append(found)
    return ScanResult(
        inventory=Inventory(tuple(files), tuple(errors)),
        files_scanned=len(blobs),
        bytes_read=bytes_read,
        files_per_language=dict(sorted(per_language.items())),
    )


def analyze_file(path: str, data: bytes, scopes: ConfigScopes) -> TestFile | None:
    """The file's tests and framework, or None if it holds no test of a supported framework.

    Raises ``SyntaxError`` (and ``ValueError`` for bytes Python cannot read) for a file
    that does not parse.
    """
    language = language_of(path)
    outline: Outline
    framework: str | None
    if language == "python":
        tree = ast.parse(data, filename=path)
        imports = python_imports(tree)
        testcases = has_testcase_class(tree)
        if "pytest" in imports:
            framework = "pytest"
        elif "unittest" in imports and testcases:
            framework = "unittest"
        elif scopes.framework_for(path, frozenset({"pytest"})):
            framework = "pytest"
        else:
            framework = "unittest" if testcases else "pytest"
        outline = outline_python(tree)
    elif language in JS_LANGUAGES:
        syntax = kit(language)
        root = syntax.parse(data)
        captures = syntax.capture(root)
        framework = (
            js_framework_from_imports(js_imports(captures))
            or scopes.framework_for(path, JS_FRAMEWORKS)
            or _js_framework_from_calls(callee_roots(captures))
        )
        outline = outline_javascript(captures, root)
    elif language == "go":
        syntax = kit("go")
        framework, outline = "go-testing", outline_go(syntax.capture(syntax.parse(data)))
    elif language == "java":
        syntax = kit("java")
        captures = syntax.capture(syntax.parse(data))
        framework = java_framework_from_imports(java_imports(captures))
        if framework is None:
            return None  # no JUnit import: a helper, or another framework (TestNG...)
        outline = outline_java(captures)
    elif language == "rust":
        if b"test" not in data:
            return None  # no #[test] / #[tokio::test]: nothing to parse for
        syntax = kit("rust")
        framework, outline = "cargo-test", outline_rust(syntax.capture(syntax.parse(data)))
    else:
        return None
    suites, tests = outline.freeze()
    if not tests and not any(True for s in suites for _ in s.all_tests()):
        return None
    assert language is not None
    return TestFile(path, framework or "unknown", language, suites, tests)


def _js_framework_from_calls(roots: set[str]) -> str | None:
    if "vi" in roots:
        return "vitest"
    if "jest" in roots:
        return "jest"
    if roots & {"suite", "suiteSetup", "suiteTeardown", "setup", "teardown", "context"}:
        return "mocha"
    return None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        if exc.filename and exc.lineno is not None:  # from ast, with Python's own message
            return f"syntax error at line {exc.lineno}: {exc.msg}"
        return str(exc)  # from tree-sitter: "syntax error at line N"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
