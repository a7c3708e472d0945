"""Repositories whose content attacks the analysis (issue 38): patterns that backtrack,
configs nested to blow the stack, files past the parsers' bounds, trees too deep.

Each is a scan error of the file, config or tree (path, phase, reason), and the rest
of the repository is still counted; never the repository's loss. The inputs are far
past each bound, so no assertion depends on how fast this machine is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dulwich.objects import Blob, Commit, ObjectID, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from clonegate._adapters.analysis.cache_keys import decode, encode_parse_error
from clonegate._adapters.analysis.frameworks import documents, mocha
from clonegate._adapters.analysis.frameworks.js_config import json_of
from clonegate._adapters.analysis.globs import glob_matches, name_matches
from clonegate._adapters.analysis.patterns import PatternError, compile_test_regex
from clonegate._adapters.analysis.problems import Refused
from clonegate._adapters.analysis.scan import scan_commit
from clonegate._domain.inventory import Inventory, ScanError

from .support.servers import GitDaemon

PLAIN_JS = b"test('plain one', () => {});\ntest('plain two', () => {});\n"
PLAIN_PY = b"def test_plain():\n    pass\n"
NESTED_TS = b"let x = " + b"a<" * 100_000 + b"1;\n"  # took 11 s to query
MINUS_PY = b"x = " + b"-" * 200_000 + b"1\n"  # MemoryError from ast.parse
PARSER_MEMORY = (
    "MemoryError: Python's parser ran out of memory: nested too deeply, or past the memory cap"
)
DEEP_TOML = b"[tool.pytest.ini_options]\nx = " + b"[" * 50_000 + b"]" * 50_000 + b"\n"


def write_repo(path: Path, files: dict[str, bytes], deep_dirs: int = 0) -> str:
    """A bare repository with one commit of ``files``, and ``deep_dirs`` directories
    nested under ``deep/`` holding a plain jest file (more than a file system allows,
    so written as git objects). Returns the commit's sha."""
    repo = Repo.init_bare(str(path), mkdir=True)
    store = repo.object_store

    def stored(tree: Tree) -> ObjectID:
        store.add_object(tree)
        return tree.id

    # Trees bottom up, deepest directories first, without recursion.
    trees: dict[str, Tree] = {"": Tree()}
    for file in sorted(files):
        parts = file.split("/")
        for depth in range(1, len(parts)):
            trees.setdefault("/".join(parts[:depth]), Tree())
    for file, data in files.items():
        blob = Blob.from_string(data)
        store.add_object(blob)
        directory, _, name = file.rpartition("/")
        trees[directory].add(name.encode(), 0o100644, blob.id)
    for directory in sorted(trees, key=lambda d: -d.count("/") if d else 1):
        if directory:
            parent, _, name = directory.rpartition("/")
            trees[parent].add(name.encode(), 0o040000, stored(trees[directory]))
    if deep_dirs:
        inner = Tree()
        blob = Blob.from_string(PLAIN_JS)
        store.add_object(blob)
        inner.add(b"deep.test.js", 0o100644, blob.id)
        for dirname in [b"d"] * (deep_dirs - 1) + [b"deep"]:
            outer = Tree()
            outer.add(dirname, 0o040000, stored(inner))
            inner = outer
        trees[""].add(b"deep", 0o040000, inner[b"deep"][1])
    commit = Commit()
    commit.tree = stored(trees[""])
    commit.author = commit.committer = b"Hostile <hostile@example.invalid>"
    commit.author_time = commit.commit_time = 1_700_000_000
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = b"hostile\n"
    store.add_object(commit)
    repo.refs[Ref(b"refs/heads/main")] = commit.id
    repo.refs.set_symbolic_ref(Ref(b"HEAD"), Ref(b"refs/heads/main"))
    return commit.id.decode()


def scan(tmp_path: Path, files: dict[str, bytes], deep_dirs: int = 0) -> Inventory:
    commit = write_repo(tmp_path / "repo.git", files, deep_dirs)
    return scan_commit(str(tmp_path / "repo.git"), commit).inventory


def errors_of(inventory: Inventory) -> dict[tuple[str, str], str]:
    return {(e.path, e.phase): e.message for e in inventory.errors}


# -- patterns ---------------------------------------------------------------------


@pytest.mark.timeout(60)  # re took minutes on each; RE2 milliseconds
def test_patterns_that_backtrack_in_re_match_in_linear_time() -> None:
    deep = "d/" * 30 + "x.test.js"
    assert not glob_matches("**/" * 16 + "*.spec.js", deep)
    assert glob_matches("**/" * 16 + "*.test.js", deep)
    assert not glob_matches("src/" + "**/" * 16 + "x", "src/" + "a/" * 40 + "y")


@pytest.mark.timeout(60)
def test_a_jest_test_regex_that_backtracks_runs_in_linear_time(tmp_path: Path) -> None:
    inventory = scan(
        tmp_path,
        {
            "jest.config.json": b'{"testRegex": ["^(a+)+$", "plain"]}',
            "a" * 40 + ".js": PLAIN_JS,
            "plain.test.js": PLAIN_JS,
        },
    )
    assert [f.path for f in inventory.files] == ["plain.test.js"]
    assert inventory.errors == ()


def test_a_jest_test_regex_that_leaves_tests_out_by_a_leading_lookahead_is_run(
    tmp_path: Path,
) -> None:
    # The form configs use to leave some tests out: RE2 has no lookahead, and
    # falling back to jest's defaults would count the e2e tests jest does not run.
    config = {"testRegex": r"^(?!.*e2e)(?:[^/]+/)*[^/]*\.test\.js$"}
    inventory = scan(
        tmp_path,
        {
            "jest.config.json": json.dumps(config).encode(),
            "src/unit.test.js": PLAIN_JS,
            "e2e/flow.test.js": PLAIN_JS,
            "src/login.e2e.test.js": PLAIN_JS,
            "a" * 40 + ".test.jsx": PLAIN_JS,  # a default name this pattern leaves out
        },
    )
    assert inventory.errors == ()
    assert [f.path for f in inventory.files] == ["src/unit.test.js"]
    assert inventory.files[0].config_note == ""


@pytest.mark.timeout(60)
def test_a_leading_lookahead_is_linear_too() -> None:
    regex = compile_test_regex("^(?!(a+)+$)(a+)+b$", "testRegex")
    assert regex.search("a" * 5000 + "b")
    assert not regex.search("a" * 5000 + "c")
    assert not regex.search("a" * 5000)
    # A lookahead in one branch only is not the whole pattern's: refused as written.
    with pytest.raises(PatternError, match=r"invalid perl operator: \(\?!"):
        compile_test_regex("^(?!x)a|b", "testRegex")


def test_globs_keep_their_meaning_on_re2() -> None:
    assert glob_matches("test/**/*.spec.js", "test/a/b/c.spec.js")
    assert glob_matches("test/**/*.spec.js", "test/c.spec.js")
    assert glob_matches("test/*.{js,cjs,mjs}", "test/a.cjs")
    assert not glob_matches("test/*.js", "test/a/b.js")
    assert glob_matches("[!a]b", "cb")
    assert glob_matches("a b#~-.js", "a b#~-.js")
    # An undecodable byte of a path (a lone surrogate) is one character, as for re.
    assert glob_matches("test/?.js", "test/\udcff.js")
    assert name_matches(("test_*.py",), "tests/test_\udcff.py")
    assert name_matches(("test/*test_*.py",), "x/test/atest_y.py")
    assert not name_matches(("[^x]y",), "zy")  # fnmatch: ^ is itself
    # Only each pattern is capped, not the alternation made of them.
    many = tuple(f"test_{'x' * 60}_{i}_*.py" for i in range(100))
    assert name_matches(many, f"tests/test_{'x' * 60}_99_a.py")


@pytest.mark.parametrize(
    ("files", "config", "reason"),
    [
        (
            {"jest.config.json": b'{"testRegex": "(unclosed"}'},
            "jest.config.json",
            "testRegex '(unclosed' cannot be run: missing ): (unclosed",
        ),
        (
            {"jest.config.json": b'{"testRegex": "(?<!e2e)\\\\.test\\\\.js$"}'},
            "jest.config.json",
            "cannot be run: invalid perl operator: (?<!",
        ),
        (
            {"jest.config.json": json.dumps({"testRegex": "a" * 3000}).encode()},
            "jest.config.json",
            "testRegex of 3000 characters, over the limit of 2000",
        ),
        (
            {
                "package.json": b'{"devDependencies": {"mocha": "1"}}',
                ".mocharc.json": b'{"spec": "test/[z-a].js"}',
            },
            ".mocharc.json",
            "glob 'test/[z-a].js' cannot be run: invalid character class range: z-a",
        ),
        (
            {"pytest.ini": b"[pytest]\npython_files = test_[z-a].py\n"},
            "pytest.ini",
            "cannot be run: invalid character class range: z-a",
        ),
    ],
)
def test_a_pattern_that_cannot_run_is_a_scan_error_of_its_config(
    tmp_path: Path, files: dict[str, bytes], config: str, reason: str
) -> None:
    plain = {"plain.test.js": PLAIN_JS, "test/plain.js": PLAIN_JS, "test_plain.py": PLAIN_PY}
    inventory = scan(tmp_path, {**files, **plain})
    errors = errors_of(inventory)
    assert set(errors) == {(config, "config")}
    assert reason in errors[config, "config"]
    assert inventory.tests >= 3  # the rest is counted, under the framework's defaults
    assert any(f.config_note == f"{config} could not be read: defaults" for f in inventory.files)


@pytest.mark.timeout(60)  # re: 3 s for 40,000 of each, quadratic; now under 1 s
def test_mocha_configs_that_made_re_quadratic_are_read_in_linear_time() -> None:
    # A .mocharc.js is parsed now (issue 40): past the parser's bound, refused unparsed.
    code = b"spec:[" * 1_000_000 + b"\nmodule.exports = { spec: ['a/*.js'] };\n"
    with pytest.raises(Refused, match="too large to parse"):
        mocha.read_config(".mocharc.js", code, mocha.DEFAULTS)
    script = "(" * 1_000_000 + " && mocha --spec 'x/*.js';mocha y/*.js"
    package = json.dumps({"mocha": {}, "scripts": {"test": script}}).encode()
    settings = mocha.read_config("package.json", package, mocha.DEFAULTS)
    assert settings is not None
    assert settings.files == ("x/*.js", "y/*.js")
    yaml = b"spec:\n  - 'a/*.js'\n  - " + b" " * 1_000_000 + b"#\n"
    assert mocha.read_config(".mocharc.yml", yaml, mocha.DEFAULTS).files == ("a/*.js",)  # type: ignore[union-attr]


# -- documents --------------------------------------------------------------------


def test_comments_are_dropped_outside_strings_only() -> None:
    text = b'{"spec": "test/**/*.spec.js", /* a */ "b": "x//y" // c\n, "c": "/* no */"}'
    assert json_of(text, comments=True) == {
        "spec": "test/**/*.spec.js",
        "b": "x//y",
        "c": "/* no */",
    }


def test_mocharc_json_keeps_double_stars_inside_its_strings(tmp_path: Path) -> None:
    spec = b"describe('s', () => { it('nested', () => {}); });\n"
    inventory = scan(
        tmp_path,
        {
            "package.json": b'{"devDependencies": {"mocha": "1"}}',
            ".mocharc.json": b'{"spec": "test/**/*.spec.js"}',
            "test/sub/a.spec.js": spec,
        },
    )
    assert [(f.path, f.framework) for f in inventory.files] == [("test/sub/a.spec.js", "mocha")]


@pytest.mark.parametrize(
    ("read", "bomb"),
    [
        ("json_of", b"[" * 200_000 + b"]" * 200_000),
        ("json_of", b'{"a": "[[[[", "b": ' + b"{" * 100 + b"}" * 100 + b"}"),
        ("toml_of", DEEP_TOML),
        ("toml_of", b"x = " + b"{a = " * 100 + b"1" + b"}" * 100),
    ],
)
def test_documents_are_refused_by_depth_before_parsing(read: str, bomb: bytes) -> None:
    with pytest.raises(Refused, match="nested deeper than 64 levels"):
        getattr(documents, read)(bomb)


def test_nesting_bombs_are_scan_errors_of_their_configs(tmp_path: Path) -> None:
    inventory = scan(
        tmp_path,
        {
            "a/.mocharc.json": b"[" * 200_000 + b"]" * 200_000,
            "a/package.json": b'{"devDependencies": {"mocha": "1"}}',
            "a/test/plain.js": PLAIN_JS,
            "pyproject.toml": DEEP_TOML,
            "test_plain.py": PLAIN_PY,
        },
    )
    assert errors_of(inventory) == {
        ("a/.mocharc.json", "config"): "JSON nested deeper than 64 levels: not read",
        ("pyproject.toml", "config"): "TOML nested deeper than 64 levels: not read",
    }
    assert {f.path for f in inventory.files} == {"a/test/plain.js", "test_plain.py"}


# -- files and trees --------------------------------------------------------------


def test_files_past_the_parsers_bounds_are_scan_errors(tmp_path: Path) -> None:
    inventory = scan(
        tmp_path,
        {
            "nested.test.ts": NESTED_TS,
            "test_minus.py": MINUS_PY,
            "big.test.js": b"x = [" + b"0," * 600_000 + b"0];\n",
            "test_big.py": b"x = [" + b"0," * 600_000 + b"0]\n",
            "plain.test.js": PLAIN_JS,
            "test_plain.py": PLAIN_PY,
        },
    )
    assert errors_of(inventory) == {
        ("nested.test.ts", "parse"): "too deeply nested: over 1,000 levels of syntax",
        ("test_minus.py", "parse"): PARSER_MEMORY,
        ("big.test.js", "parse"): (
            "too large to parse: 600,004 punctuation marks, over the limit of 500,000"
        ),
        ("test_big.py", "parse"): (
            "too large to parse: 600,003 punctuation marks, over the limit of 500,000"
        ),
    }
    assert {f.path for f in inventory.files} == {"plain.test.js", "test_plain.py"}


def test_a_memory_error_reading_a_config_or_a_file_ends_the_worker_after_its_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Maybe the worker's cap: what failed to allocate may have left state behind.
    from clonegate._adapters.analysis.frameworks import jest
    from clonegate._adapters.workers import zygote

    def out_of_memory(content: bytes) -> object:
        raise MemoryError

    monkeypatch.setattr(zygote, "_ending", False)
    monkeypatch.setattr(jest, "json_of", out_of_memory)
    inventory = scan(tmp_path, {"jest.config.json": b"{}", "plain.test.js": PLAIN_JS})
    assert errors_of(inventory) == {("jest.config.json", "config"): "MemoryError"}
    assert inventory.tests == 2  # under jest's defaults, said so
    assert zygote._ending


def test_a_tree_too_deep_is_a_scan_error_and_the_rest_is_listed(tmp_path: Path) -> None:
    inventory = scan(tmp_path, {"plain.test.js": PLAIN_JS}, deep_dirs=5_000)
    assert [f.path for f in inventory.files] == ["plain.test.js"]
    [error] = inventory.errors
    assert error.path == "deep" + "/d" * 255
    assert (error.phase, error.message) == (
        "list",
        "directories nested deeper than 256 levels: not listed",
    )


def test_a_refusal_in_another_phase_is_cached_with_its_phase() -> None:
    value = encode_parse_error("over a bound", "query")
    assert decode(value, "a.test.js") == ScanError("a.test.js", "query", "over a bound")
    assert decode(encode_parse_error("syntax error at line 1"), "a.py") == ScanError(
        "a.py", "parse", "syntax error at line 1"
    )


# -- end to end -------------------------------------------------------------------


def test_a_hostile_repository_served_by_git_daemon_is_ok_with_its_scan_errors(
    daemon: GitDaemon, repo_root: Path
) -> None:
    name = "hostile-analysis"
    write_repo(
        repo_root / f"{name}.git",
        {
            "jest.config.json": b'{"testRegex": "(unclosed"}',
            "pyproject.toml": DEEP_TOML,
            "nested.test.ts": NESTED_TS,
            "test_minus.py": MINUS_PY,
            "plain.test.js": PLAIN_JS,
            "test_plain.py": PLAIN_PY,
        },
        deep_dirs=5_000,
    )
    result = subprocess.run(
        [sys.executable, "-m", "clonegate", "analyze", "--format", "jsonl", daemon.url(name)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,  # only turns a hang into a failure
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "ok", report
    analysis = report["analysis"]
    assert analysis["tests"] == 3  # plain.test.js's two, test_plain.py's one
    # A path longer than 300 characters is shown cut (reports.MAX_ERROR_TEXT).
    shown = {(e["path"][:8], e["phase"]): e["message"] for e in analysis["errors"]}
    assert shown == {
        ("deep/d/d", "list"): "directories nested deeper than 256 levels: not listed",
        ("jest.con", "config"): "testRegex '(unclosed' cannot be run: missing ): (unclosed",
        ("pyprojec", "config"): "TOML nested deeper than 64 levels: not read",
        ("nested.t", "parse"): "too deeply nested: over 1,000 levels of syntax",
        ("test_min", "parse"): PARSER_MEMORY,
    }
    assert analysis["scan_errors"] == 5
