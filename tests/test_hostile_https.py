"""Credentials and redirects against https servers that record every request (issue 13).

Two servers (two origins) share one test CA; each logs the Host and Authorization
of every request, so each test asserts what reached which host, not only whether
a clone worked.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from clonegate import (
    CloneSettings,
    Option,
    RepositoryReport,
    with_max_concurrent_clones,
    with_netrc,
    with_token,
)
from clonegate._app import compose

from .support.hostile_servers import EXPECTED, RecordingServer, recording_https, tls_contexts
from .support.repos import FixtureRepo
from .support.servers import TOKEN, GitDaemon, SshServer, http_git_server


@pytest.fixture
def two_hosts(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> Iterator[tuple[RecordingServer, RecordingServer, Path]]:
    context, ca_file = tls_contexts(tmp_path / "tls")
    with (
        recording_https(repo_root, context) as first,
        recording_https(repo_root, context) as second,
    ):
        yield first, second, ca_file


async def run(
    urls: list[str], ca_file: Path, work_dir: Path, *options: Option, ssh_command: str = "ssh"
) -> dict[str, RepositoryReport]:
    work_dir.mkdir(exist_ok=True)
    settings = CloneSettings(ca_bundle=ca_file, work_dir=work_dir, ssh_command=ssh_command)
    use_case = compose(with_max_concurrent_clones(1), *options, clone=settings, pool=None)
    async with use_case.analyze_many(urls) as batch:
        return {report.url: report async for report in batch}


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


async def test_a_token_goes_to_its_host_only_and_only_when_asked(
    two_hosts: tuple[RecordingServer, RecordingServer, Path], tmp_path: Path
) -> None:
    first, second, ca_file = two_hosts
    home = f"127.0.0.1:{first.port}"
    urls = [
        first.url("/basic.git"),  # public on the token's host
        first.url("/private/basic.git"),  # private on the token's host
        second.url("/private/basic.git"),  # the same host name, another port
        first.url("/private/other.git", host="localhost"),  # the same port, another name
        first.url("/private/nested.git", userinfo="alice:pw"),  # user-info as written
    ]
    reports = await run(urls, ca_file, tmp_path / "work", with_token(TOKEN, home))
    status = {url: reports[url.replace("alice:pw", "***")].status for url in urls}
    assert list(status.values()) == ["ok", "ok", "failed", "failed", "failed"]
    # The public repository never asked: the token was never sent.
    public = [r.authorization for r in first.requests if r.path.startswith("/basic.git")]
    assert public
    assert set(public) == {None}
    # The private one got it only after its 401, then with every request.
    private = [r.authorization for r in first.requests if r.path.startswith("/private/basic")]
    assert private[0] is None
    assert private[1:]
    assert set(private[1:]) == {EXPECTED}
    # Nothing anywhere else: not the other port, not the other name for this server.
    assert set(second.sent_to(f"127.0.0.1:{second.port}")) == {None}
    assert set(first.sent_to(f"localhost:{first.port}")) == {None}
    # User-info in a URL is used as written, instead of the token, after the 401.
    nested = [r.authorization for r in first.requests if r.path.startswith("/private/nested")]
    assert nested == [None, basic("alice", "pw")]
    error = reports[urls[2]].error
    assert error is not None
    assert error.message.endswith("(no credentials for this host)")


async def test_netrc_entries_bind_each_credential_to_its_host(
    two_hosts: tuple[RecordingServer, RecordingServer, Path], tmp_path: Path
) -> None:
    first, second, ca_file = two_hosts
    netrc = tmp_path / "netrc"
    netrc.write_text(
        f"machine 127.0.0.1:{first.port} login x-access-token password {TOKEN}\n"
        f"machine 127.0.0.1:{second.port} login bob password wrong-for-this-one\n"
        "default login everyone password sent-nowhere\n"
    )
    netrc.chmod(0o644)
    with pytest.raises(ValueError, match="other users can read this file"):
        with_netrc(netrc)
    netrc.chmod(0o600)
    urls = [
        first.url("/private/basic.git"),
        second.url("/private/basic.git"),
        first.url("/private/basic.git", host="localhost"),
    ]
    reports = await run(urls, ca_file, tmp_path / "work", with_netrc(netrc))
    assert [reports[u].status for u in urls] == ["ok", "failed", "failed"]
    assert EXPECTED in first.sent_to(f"127.0.0.1:{first.port}")
    assert set(second.sent_to(f"127.0.0.1:{second.port}")) == {
        None,
        basic("bob", "wrong-for-this-one"),
    }
    assert set(first.sent_to(f"localhost:{first.port}")) == {None}  # default: ignored
    for server in (first, second):
        assert not any("sent-nowhere" in str(r) for r in server.requests)


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_redirects_on_the_same_origin_are_followed_with_the_credential(
    two_hosts: tuple[RecordingServer, RecordingServer, Path], tmp_path: Path, status: int
) -> None:
    first, _second, ca_file = two_hosts
    first.redirects["/old/"] = (status, "/private/")  # a renamed repository
    url = first.url("/old/basic.git")
    reports = await run(
        [url], ca_file, tmp_path / "work", with_token(TOKEN, f"127.0.0.1:{first.port}")
    )
    assert reports[url].status == "ok", reports[url].error
    assert reports[url].redirected_to == first.url("/private/basic.git")
    paths = [(r.path.split("?")[0], r.authorization) for r in first.requests]
    assert paths[:3] == [
        ("/old/basic.git/info/refs", None),
        ("/private/basic.git/info/refs", None),  # the challenge...
        ("/private/basic.git/info/refs", EXPECTED),  # ...answered
    ]


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_a_redirect_to_another_origin_is_followed_without_the_credential(
    two_hosts: tuple[RecordingServer, RecordingServer, Path], tmp_path: Path, status: int
) -> None:
    first, second, ca_file = two_hosts
    first.redirects["/public/"] = (status, second.url("/"))  # moved to another host
    first.redirects["/secret/"] = (status, second.url("/private/"))
    first.redirects["/private/"] = (status, second.url("/private/"))
    urls = [first.url("/public/basic.git"), first.url("/secret/basic.git")]
    reports = await run(
        [*urls, first.url("/private/basic.git")],
        ca_file,
        tmp_path / "work",
        with_token(TOKEN, f"127.0.0.1:{first.port}"),
    )
    assert reports[urls[0]].status == "ok"
    assert reports[urls[0]].redirected_to == second.url("/basic.git")
    assert reports[urls[1]].status == "failed"
    error = reports[urls[1]].error
    assert error is not None
    assert error.kind == "authentication"
    # The redirecting origin never asked (no 401), so it never got the token; and
    # the token never followed a redirect to the other origin.
    assert set(first.sent_to(f"127.0.0.1:{first.port}")) == {None}
    assert set(second.sent_to(f"127.0.0.1:{second.port}")) == {None}


async def test_redirects_that_downgrade_loop_or_go_on_are_refused(
    two_hosts: tuple[RecordingServer, RecordingServer, Path],
    repo_root: Path,
    tmp_path: Path,
) -> None:
    first, _second, ca_file = two_hosts
    with http_git_server(repo_root) as plain:
        first.redirects["/downgrade/"] = (301, f"http://127.0.0.1:{plain.port}/")
        first.redirects["/loop/"] = (302, "/loop/")
        for hop in range(8):
            first.redirects[f"/hop{hop}/"] = (307, f"/hop{hop + 1}/")
        first.redirects["/hop8/"] = (307, "/")
        first.redirects["/elsewhere/"] = (301, "ftp://127.0.0.1/")
        first.redirects["/userinfo/"] = (301, f"https://eve:pw@127.0.0.1:{first.port}/")
        first.redirects["/badhost/"] = (301, "https://-oProxyCommand=x/")
        cases = {
            "/downgrade/basic.git": "redirect from https to plain http refused",
            "/loop/basic.git": "redirect loop",
            "/hop0/basic.git": "more than 5 redirects",
            "/elsewhere/basic.git": "redirect to a URL that is not http(s)",
            "/userinfo/basic.git": "redirect to a URL with user-info refused",
            "/badhost/basic.git": "is not a host name or address",
        }
        reports = await run(
            [first.url(path) for path in cases],
            ca_file,
            tmp_path / "work",
            with_token(TOKEN, f"127.0.0.1:{first.port}"),
        )
    for path, message in cases.items():
        error = reports[first.url(path)].error
        assert error is not None
        assert (error.kind, message in error.message) == ("protocol", True), error
    assert "eve" not in str(reports)
    # Refused before any request went there.
    assert all(not r.path.startswith("/basic.git") for r in first.requests)


async def test_ipv6_literals_on_every_transport(
    daemon: GitDaemon, sshd: SshServer, repo_root: Path, tmp_path: Path
) -> None:
    context, ca_file = tls_contexts(tmp_path / "tls")
    with recording_https(repo_root, context, bind="::1") as v6:
        urls = [
            f"git://[::1]:{daemon.port}/basic.git",
            v6.url("/private/basic.git", host="[::1]"),
            sshd.url(repo_root, "basic").replace("127.0.0.1", "[::1]"),
        ]
        reports = await run(
            urls,
            ca_file,
            tmp_path / "work",
            with_token(TOKEN, f"[::1]:{v6.port}"),
            ssh_command=sshd.ssh_command,
        )
    assert {url: r.status for url, r in reports.items()} == dict.fromkeys(urls, "ok")
    assert EXPECTED in v6.sent_to(f"[::1]:{v6.port}")
