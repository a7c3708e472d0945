"""Sources on the command line, end to end: a loopback GitHub API (in a thread of its
own: the command line runs trio itself) lists repositories that a real git daemon on
127.0.0.1 serves; `analyze` lists, filters, clones and analyzes them, `--dry-run`
prints them and connects to no git server, a listing that fails is one escaped line
and exit 1 with what was listed still analyzed (issue 45, ADR 0023)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from clonegate_cli.app import app

from .support.forges.bitbucket import BitbucketApi
from .support.forges.catalogue import Made, made
from .support.forges.core import Answer, ForgeServer, Seen, failing_from, json_answer
from .support.forges.gitea import GiteaApi
from .support.forges.github import GitHubApi
from .support.forges.gitlab import GitLabApi
from .support.forges.threaded import in_a_thread
from .support.repos import make_repo
from .support.servers import GitDaemon, git_daemon, raw_tcp_server

_BOUND = 60.0  # seconds a loaded machine may take to get to a step: a safety net


def _lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


@pytest.fixture
def untouched_git() -> Iterator[tuple[str, list[str]]]:
    """A git server's address that records every connection and answers none."""
    connections: list[str] = []

    def record(conn: socket.socket) -> None:
        connections.append(str(conn.getpeername()))
        conn.close()

    with raw_tcp_server(record) as port:
        yield f"git://127.0.0.1:{port}", connections


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitDaemon]:
    """acme/repo-00000 ... acme/repo-00005 on a git daemon, each with one test."""
    root = tmp_path_factory.mktemp("listed")
    test_file = b"def test_one():\n    pass\n"
    for repo in made("acme", 6):
        make_repo(root / "acme", repo.name, files={"tests/test_it.py": test_file})
    with git_daemon(root) as daemon:
        yield daemon


def _github(repos: list[Made], git_base: str) -> GitHubApi:
    return GitHubApi(repos, git_base=git_base, orgs=["acme"], prefix="/api/v3")


def _org(server: GitHubApi) -> str:
    return f"github:org/acme@{server.base_url}"


def test_dry_run_prints_the_filtered_list_and_connects_to_no_git_server(
    runner: CliRunner, untouched_git: tuple[str, list[str]]
) -> None:
    git_base, connections = untouched_git
    repos = made("acme", 250)
    with in_a_thread(_github(repos, git_base)) as server:
        args = ["analyze", "--dry-run", _org(server), "pallets/click", "--skip-forks"]
        result = runner.invoke(app, [*args, "--skip-archived", "--match", "-000[0-3][0-9]$"])
    assert result.exit_code == 0, result.output
    kept = [r for r in repos[:40] if not r.fork and not r.archived]
    assert result.stdout.splitlines() == [
        *[r.clone_url(git_base) for r in kept],
        "https://github.com/pallets/click",
    ]
    assert connections == []
    assert len(server.served_pages()) == len(set(server.served_pages())) == 3
    assert f"{len(kept) + 1} repositories; nothing was cloned" in result.stderr


def test_dry_run_json_has_each_repositorys_metadata(
    runner: CliRunner, untouched_git: tuple[str, list[str]]
) -> None:
    git_base, connections = untouched_git
    with in_a_thread(_github(made("acme", 250), git_base)) as server:
        args = [_org(server), "--language", "GO", "--min-stars", "1000", "--limit", "3"]
        result = runner.invoke(app, ["analyze", "--dry-run", "--format", "json", *args])
    assert result.exit_code == 0, result.output
    found = _lines(result.stdout)
    assert [d["listed"]["full_name"] for d in found] == [
        "acme/repo-00001",
        "acme/repo-00013",
        "acme/repo-00025",
    ]
    first = found[0]
    assert first["url"] == first["listed"]["clone_url"] == f"{git_base}/acme/repo-00001.git"
    wanted = {"forge": "github", "forge_id": "1001", "language": "Go", "stars": 2919}
    assert {name: first["listed"][name] for name in wanted} == wanted
    assert first["listed"]["fork"] is False
    assert first["listed"]["pushed_at"] == "2024-01-01T01:00:00+00:00"
    assert len(server.seen) == 1  # the limit was reached on the first page
    assert connections == []


def test_a_listing_that_fails_midway_is_one_escaped_line_and_keeps_what_it_listed(
    runner: CliRunner, untouched_git: tuple[str, list[str]]
) -> None:
    git_base, _ = untouched_git
    hostile = {"message": "Server Error \x1b[2J\x1b]0;owned\x07 \u202e"}
    server = _github(made("acme", 250), git_base)
    server.tamper = failing_from(2, json_answer(500, hostile))
    with in_a_thread(server):
        result = runner.invoke(app, ["analyze", "--dry-run", _org(server), "pallets/click"])
    assert result.exit_code == 1
    assert len(result.stdout.splitlines()) == 100 + 1  # the first page, then the URL after
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1
    assert errors[0].startswith(f"clonegate: error: {_org(server)}: HTTP 500 for ")
    assert "\\x1b[2J" in errors[0]
    assert "\x1b" not in result.stderr
    assert "\x07" not in result.stderr
    assert "\u202e" not in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (["https://x.test/a", "--skip-forks"], {}, "apply to what sources list"),
        (["gitlab:group/g", "--language", "go"], {}, "never says a repository's language"),
        (["bitbucket:workspace/w", "--min-stars", "3"], {}, "never says a repository's stars"),
        (["gitea:org/o@codeberg.org"], {"GITEA_TOKEN": "t"}, "GITEA_INSTANCE_URL is not"),
        (["github:org/o", "--match", "(?=a)"], {}, "--match '(?=a)' cannot be used"),
        (["github:org/o", "--pushed-after", "yesterday"], {}, "--pushed-after 'yesterday'"),
        (["github:org/o", "--limit", "0"], {}, "'--limit': 0 is not in the range"),
        (["github:team/o"], {}, "not a source: github lists github:org/…"),
    ],
)
def test_what_cannot_be_listed_as_asked_is_a_usage_error(
    runner: CliRunner,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    env: dict[str, str],
    said: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = runner.invoke(app, ["analyze", *args])
    assert result.exit_code == 2, result.output
    assert said in result.stderr
    assert "Traceback" not in result.stderr


def test_a_rate_limit_wait_is_said_before_it_is_waited(
    runner: CliRunner, untouched_git: tuple[str, list[str]]
) -> None:
    git_base, _ = untouched_git
    server = _github(made("acme", 3), git_base)
    server.secondary(count=1, retry_after=1)
    with in_a_thread(server):
        result = runner.invoke(app, ["analyze", "--dry-run", _org(server)])
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 3
    assert (
        f"waiting 1 s for 127.0.0.1's rate limit (GitHub's secondary rate limit; {_org(server)})"
        in result.stderr
    )
    assert [seen.status for seen in server.seen] == [403, 200]


def test_listed_filtered_cloned_and_analyzed(
    runner: CliRunner, served: GitDaemon, tmpdir_env: Path
) -> None:
    git_base = f"git://127.0.0.1:{served.port}"
    with in_a_thread(_github(made("acme", 6), git_base)) as server:
        result = runner.invoke(app, ["analyze", _org(server), "--skip-forks", "-j", "2"])
    assert result.exit_code == 0, result.output
    reports = sorted(_lines(result.stdout), key=lambda r: r["index"])
    assert [r["listed"]["full_name"] for r in reports] == [
        f"acme/repo-0000{i}" for i in (0, 1, 2, 3, 5)
    ]
    assert {r["status"] for r in reports} == {"ok"}
    assert {r["analysis"]["tests"] for r in reports} == {1}
    assert reports[0]["url"] == f"{git_base}/acme/repo-00000.git"
    assert list(tmpdir_env.iterdir()) == []


def test_what_was_listed_before_a_failure_is_analyzed_and_the_run_fails(
    runner: CliRunner, served: GitDaemon, tmpdir_env: Path
) -> None:
    git_base = f"git://127.0.0.1:{served.port}"
    server = _github(made("acme", 150), git_base)
    server.tamper = failing_from(2, json_answer(502, {"message": "Bad gateway"}))
    with in_a_thread(server):
        args = ["analyze", _org(server), "--match", "repo-0000[0-2]$"]
        result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    reports = _lines(result.stdout)
    assert sorted(r["listed"]["full_name"] for r in reports) == [
        "acme/repo-00000",
        "acme/repo-00001",
        "acme/repo-00002",
    ]
    assert {r["status"] for r in reports} == {"ok"}
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1
    assert "HTTP 502" in errors[0]
    assert "Bad gateway" in errors[0]
    assert "1 listing problems (above): the list is not whole" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_first_repository_is_analyzed_before_the_next_page_is_listed(
    served: GitDaemon, tmpdir_env: Path, tmp_path: Path
) -> None:
    """Streaming, through the whole path: the second page is answered only once the first
    report has come out of the command, so a run that listed everything before cloning
    would never get there (it fails at the bound instead)."""
    git_base = f"git://127.0.0.1:{served.port}"
    reported = threading.Event()
    order: list[str] = []

    def hold_page_two(request: Seen, served_answer: Answer, index: int) -> Answer:
        if index == 2:
            released = reported.wait(_BOUND)
            order.append("page 2 answered" if released else "page 2 timed out")
        return served_answer

    server = _github(made("acme", 150), git_base)
    server.tamper = hold_page_two
    stderr = tmp_path / "stderr.txt"
    with in_a_thread(server), stderr.open("w") as errors_file:
        command = [sys.executable, "-m", "clonegate", "analyze", _org(server)]
        with subprocess.Popen(
            [*command, "--match", "-0000[0-2]$"],
            stdout=subprocess.PIPE,
            stderr=errors_file,
            text=True,
        ) as process:
            assert process.stdout is not None
            first = process.stdout.readline()
            order.append("first report")
            reported.set()
            rest = process.stdout.read()  # through the same buffer as the first line
            process.wait(_BOUND)
    errors = stderr.read_text()
    assert process.returncode == 0, errors
    assert order == ["first report", "page 2 answered"]
    assert len(_lines(first + rest)) == 3


def _forge(forge: str, git_base: str) -> tuple[ForgeServer, str]:
    """A loopback API of ``forge`` listing 250 repositories of acme, and its source."""
    repos = made("acme", 250)
    if forge == "gitlab":
        server: ForgeServer = GitLabApi(repos, git_base=git_base)
        return server, "gitlab:group/acme@{}"
    if forge == "gitea":
        return GiteaApi(repos, git_base=git_base, orgs=["acme"]), "gitea:org/acme@{}"
    if forge == "bitbucket":
        return BitbucketApi(repos, git_base=git_base), "bitbucket:workspace/acme@{}"
    return _github(repos, git_base), "github:org/acme@{}"


@pytest.mark.parametrize("forge", ["github", "gitlab", "gitea", "bitbucket"])
def test_every_forge_lists_whole_and_a_limit_stops_it_early(
    runner: CliRunner, untouched_git: tuple[str, list[str]], forge: str
) -> None:
    git_base, connections = untouched_git
    server, shape = _forge(forge, git_base)
    with in_a_thread(server):
        source = shape.format(server.base_url)
        whole = runner.invoke(app, ["analyze", "--dry-run", source, "--format", "jsonl"])
        requests = len(server.seen)
        limited = runner.invoke(app, ["analyze", "--dry-run", source, "--limit", "3"])
    assert whole.exit_code == 0, whole.output
    found = _lines(whole.stdout)
    assert sorted(d["listed"]["full_name"] for d in found) == [
        f"acme/repo-{i:05d}" for i in range(250)
    ]
    assert {d["listed"]["forge"] for d in found} == {forge}
    assert limited.exit_code == 0, limited.output
    assert len(limited.stdout.splitlines()) == 3
    assert len(server.seen) - requests == 1  # the first page held them: no other fetched
    assert connections == []


def test_a_run_that_lists_clones_with_its_forges_token_bound_to_its_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from clonegate import UseCaseConfig
    from clonegate.sources import entry_of
    from clonegate_cli._listing import Listing, ListingFlags

    monkeypatch.setenv("GH_TOKEN", "ghp_from-the-environment")
    listing = Listing.of([entry_of("github:org/pallets")], ListingFlags())
    credentials = UseCaseConfig.of(listing.clone_options()).credentials
    assert [(c.host, c.port, c.username) for c in credentials] == [
        ("github.com", 443, "x-access-token")
    ]
    # A run of URLs only is as before: the environment's token is not sent anywhere.
    assert Listing.of(["https://github.com/a/b"], ListingFlags()).clone_options() == ()


def test_ctrl_c_during_a_rate_limit_wait_stops_the_run_at_once(
    untouched_git: tuple[str, list[str]],
) -> None:
    git_base, connections = untouched_git
    server = _github(made("acme", 250), git_base)
    server.secondary(count=1, retry_after=3600)
    with in_a_thread(server):
        command = [sys.executable, "-m", "clonegate", "analyze", _org(server)]
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        ) as process:
            assert process.stderr is not None
            said = process.stderr.readline()  # said before the wait begins
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=_BOUND)
    assert said.startswith("waiting 3600 s for 127.0.0.1's rate limit")
    assert process.returncode == 130, err
    assert "interrupted; every clone was stopped and removed; 0 repositories finished" in err
    assert "Traceback" not in err
    assert out == ""
    assert connections == []


def test_a_list_file_mixes_sources_shorthand_and_urls_and_v_says_what_was_left_out(
    runner: CliRunner, untouched_git: tuple[str, list[str]], tmp_path: Path
) -> None:
    git_base, connections = untouched_git
    with in_a_thread(_github(made("acme", 6), git_base)) as server:
        listed = tmp_path / "list.txt"
        listed.write_bytes(
            b"\xef\xbb\xbf# where the repositories come from\r\n"
            + f"{_org(server)}  # the organisation\r\n".encode()
            + b"pallets/click\r\n\r\ngit://127.0.0.1:1/other.git\r\n"
        )
        args = ["analyze", "--dry-run", "--from-file", str(listed), "--skip-forks", "-v"]
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        *[f"{git_base}/acme/repo-0000{i}.git" for i in (0, 1, 2, 3, 5)],
        "https://github.com/pallets/click",
        "git://127.0.0.1:1/other.git",
    ]
    assert f"left out acme/repo-00004 ({_org(server)}): fork" in result.stderr
    assert connections == []
