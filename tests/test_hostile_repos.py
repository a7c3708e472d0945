"""Repositories and servers that try to run code, break the output, or be misreported (issue 13)."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .support.hostile_servers import renaming_git_daemon
from .support.repos import GIT_ENV, git, make_repo
from .support.servers import GitDaemon

LFS_POINTER = (
    b"version https://git-lfs.github.com/spec/v1\n"
    b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    b"size 12345\n"
)


def clonegate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process: its workers start with exactly ``env``."""
    return subprocess.run(
        [sys.executable, "-m", "clonegate", "analyze", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,  # only turns a hang into a failure
    )


def test_no_filter_from_the_users_git_config_runs_in_a_checkout(
    daemon: GitDaemon, repo_root: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "filter-ran"
    home = tmp_path / "home"
    home.mkdir()
    # What git-lfs's installer writes, with a command that leaves a trace instead.
    (home / ".gitconfig").write_text(
        f'[filter "evil"]\n\tsmudge = "sh -c \'touch {marker}; cat\'"\n\tclean = cat\n'
        "\trequired = true\n"
        "[core]\n\tautocrlf = true\n"
    )
    make_repo(
        repo_root,
        "filtered",
        files={
            ".gitattributes": b"*.txt filter=evil\n*.bin filter=lfs\n*.crlf text\n",
            "zz.bin": LFS_POINTER,  # after the .txt files: dulwich fails on it
            "lines.crlf": b"one\ntwo\n",
        },
    )
    # Control: dulwich on its own, with this HOME, does run the filter; so the
    # assertions below can fail.
    control = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from dulwich import porcelain; porcelain.clone(sys.argv[1], sys.argv[2])",
            daemon.url("filtered"),
            str(tmp_path / "control"),
        ],
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        timeout=300,
    )
    assert marker.exists(), control.stderr
    marker.unlink()

    keep = tmp_path / "kept"
    result = clonegate(
        "--format", "jsonl", "--keep", str(keep), daemon.url("filtered"), env={"HOME": str(home)}
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "ok"
    assert not marker.exists()
    clone = keep / f"127.0.0.1_{daemon.port}" / "filtered"
    # The files as committed: no filter, no LFS download, no line-ending conversion.
    assert (clone / "file2.txt").read_bytes() == b"commit 2\n"
    assert (clone / "zz.bin").read_bytes() == LFS_POINTER
    assert (clone / "lines.crlf").read_bytes() == b"one\ntwo\n"
    # Run again: the update in place (fetch, reset) is as blind to the config.
    again = clonegate("--format", "jsonl", "--keep", str(keep), daemon.url("filtered"))
    assert again.returncode == 0, again.stderr
    assert not marker.exists()


def _commit_with_tree(root: Path, name: str, entries: str) -> None:
    """A bare repository whose one commit has the tree ``entries`` (git mktree's input,
    with ``{blob}`` for a blob's id): a tree git itself would never make."""
    bare = root / f"{name}.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    blob = (
        subprocess.run(
            ["git", "-C", str(bare), "hash-object", "-w", "--stdin"],
            input=b"[core]\n\tfsmonitor = touch pwned\n",
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    tree = ""
    for line in reversed(entries.replace("{blob}", blob).split("|")):
        # Innermost first: each level's tree holds the previous one.
        listing = line.replace("{tree}", tree)
        tree = (
            subprocess.run(
                ["git", "-C", str(bare), "mktree"],
                input=listing.encode(),
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .strip()
        )
    commit = git("commit-tree", "-m", "hostile", tree, cwd=bare, env=GIT_ENV)
    git("update-ref", "refs/heads/main", commit, cwd=bare)


def test_a_path_git_refuses_is_an_invalid_repository(
    daemon: GitDaemon, repo_root: Path, tmp_path: Path
) -> None:
    _commit_with_tree(
        repo_root, "dotgit", "040000 tree {tree}\t.git\n|100644 blob {blob}\tconfig\n"
    )
    result = clonegate("--format", "jsonl", "--keep", str(tmp_path / "kept"), daemon.url("dotgit"))
    report = json.loads(result.stdout)
    assert result.returncode == 1
    assert report["error"]["kind"] == "invalid_repository"
    assert report["error"]["message"].endswith(
        "the repository holds a file path git refuses to check out (.git/config)"
    )
    assert not (tmp_path / "kept" / f"127.0.0.1_{daemon.port}" / "dotgit").exists()


HOSTILE_BRANCH = b"[/red]\x1b]0;pwned\x07\x1b[2J"
SNEAKY_BRANCH = "main\u202egnp.exe"  # valid for git; the RLO turns text around on screen


def test_hostile_branch_names_are_shown_as_text_everywhere(
    repo_root: Path, repos: object, daemon: GitDaemon
) -> None:
    source = repo_root / "basic.git"
    with (
        renaming_git_daemon(source, HOSTILE_BRANCH) as hostile_port,
        renaming_git_daemon(source, SNEAKY_BRANCH.encode()) as sneaky_port,
    ):
        hostile = f"git://127.0.0.1:{hostile_port}/basic.git"
        sneaky = f"git://127.0.0.1:{sneaky_port}/basic.git"
        urls = [hostile, sneaky, daemon.url("basic")]
        table = clonegate("--format", "table", "-v", *urls, env={"COLUMNS": "300"})
        jsonl = clonegate("--format", "jsonl", *urls)
    reports = {r["url"]: r for r in map(json.loads, jsonl.stdout.splitlines())}
    assert [reports[u]["status"] for u in urls] == ["failed", "ok", "ok"]
    invalid = (
        "the server's HEAD names an invalid branch: refs/heads/[/red]\\x1b]0;pwned\\x07\\x1b[2J"
    )
    assert reports[hostile]["error"] == {
        "phase": "clone",
        "kind": "invalid_repository",
        "message": f"{hostile}: {invalid}",
    }
    assert reports[sneaky]["ref"]["branch"] == SNEAKY_BRANCH  # JSON keeps the data...
    assert '"branch": "main\\u202egnp.exe"' in jsonl.stdout  # ...escaped by the encoder
    for output in (table.stdout, table.stderr, jsonl.stdout):
        assert "\x1b" not in output
        assert "\x07" not in output
        assert "\u202e" not in output
    # The table: each entry whole, in order, every detail shown as text.
    lines = [" ".join(line.split()) for line in table.stdout.splitlines()]
    assert lines[lines.index(f"1 failed {hostile}") + 1] == invalid
    assert lines[lines.index(f"2 ok {sneaky}") + 1].startswith("main\\u202egnp.exe ")
    # The -v log: one line per step of each repository, and nothing else but the early
    # clone taken over and what the memory budget (on by default, issue 46) says: the
    # size it chose (two lines, figures only) and each clone's reservation as it
    # changes (its URL, escaped, and MiB).
    step = r"\d\d:\d\d:\d\d (queued|cloning|cloned|analyzing|done ok|done failed) git://\S+"
    budget = r"INFO clonegate: memory budget: \d+ MiB (\(auto: .*\)|for clones \(.*\))"
    memory = r"\d\d:\d\d:\d\d memory git://\S+: \d+ -> \d+ MiB"
    # The first URL's clone, started from the raw command line, taken over (issue 47).
    early = r"INFO clonegate\._adapters\.git\.dulwich_vcs: git://\S+: the clone started .*"
    lines = table.stderr.splitlines()
    assert len([line for line in lines if re.fullmatch(budget, line)]) == 2, table.stderr
    logged = [line for line in lines if not re.fullmatch(f"{budget}|{memory}|{early}", line)]
    for line in logged:
        assert re.fullmatch(step, line), line
    assert len(logged) == 3 + 5 + 5  # hostile (no "cloned"), sneaky, basic


@contextmanager
def dumb_http_server(directory: Path) -> Iterator[int]:
    handler = functools.partial(_QuietFiles, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_servers_that_are_not_what_they_seem_get_the_right_error_kind(
    repo_root: Path, repos: object
) -> None:
    git("update-server-info", cwd=repo_root / "basic.git")  # what a dumb server serves
    with dumb_http_server(repo_root) as port:
        dumb = f"http://127.0.0.1:{port}/basic.git"
        page = f"http://127.0.0.1:{port}/"  # a directory listing: a web page
        result = clonegate("--format", "jsonl", dumb, f"{page}nothing-here/x.git", page + "x")
    by_url = {r["url"]: r["error"] for r in map(json.loads, result.stdout.splitlines())}
    assert by_url[dumb]["kind"] == "protocol"
    assert "dumb HTTP servers and web pages cannot be cloned" in by_url[dumb]["message"]
    assert by_url[f"{page}nothing-here/x.git"]["kind"] == "not_found"
    # A proxy that is not there: the proxy is named as the problem, not the repository.
    proxied = clonegate(
        "--format",
        "jsonl",
        "https://git.example/org/repo.git",
        env={"HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""},
    )
    error = json.loads(proxied.stdout)["error"]
    assert (error["kind"], error["message"]) == (
        "transport",
        "https://git.example/org/repo.git: cannot connect through the proxy (check HTTPS_PROXY)",
    )
