"""Redis credentials with any characters (issue 39, item 9; ADR 0015): percent-encoded
in the URL and decoded, the user-info ending at the last "@" for connecting and for
every message, and never shown: not in any output, log, report or Redis key."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest
import trio

from clonegate import redact
from clonegate._adapters.redis.connection import redis_url
from clonegate._adapters.redis.url import parse_redis_url
from clonegate.cluster import open_redis

from .support.redis_server import RedisServer
from .support.repos import make_repo
from .support.servers import free_port, git_daemon

ROOT = Path(__file__).resolve().parents[1]
SECRET = "SecretTail"  # in every password below: it must never be seen
PASSWORD = f"p@ss/w:rd%41?#{SECRET}"  # "@", "/", ":", "%", and more URL syntax
USER = "gate@ops:1"


def _encoded(port: int) -> str:
    return f"redis://{quote(USER, safe='')}:{quote(PASSWORD, safe='')}@127.0.0.1:{port}/0"


def test_the_user_info_ends_at_the_last_at_and_is_decoded() -> None:
    url = parse_redis_url(_encoded(6379))
    assert (url.username, url.password) == (USER, PASSWORD)
    assert url.without_credentials == "redis://127.0.0.1:6379/0"
    raw = parse_redis_url(f"redis://alice:p@ss/w:rd{SECRET}@127.0.0.1:6379/2")
    assert (raw.username, raw.password) == ("alice", f"p@ss/w:rd{SECRET}")
    assert SECRET not in repr(raw)
    assert str(raw) == "redis://***@127.0.0.1:6379/2"
    # A password from a file joins a URL without one, and only such a URL.
    joined = parse_redis_url(redis_url("redis://alice@127.0.0.1:6379/2", PASSWORD))
    assert (joined.username, joined.password) == ("alice", PASSWORD)
    with pytest.raises(ValueError, match="has a password already") as twice:
        redis_url(f"redis://alice:{SECRET}@127.0.0.1:6379/2", PASSWORD)
    assert SECRET not in str(twice.value)


@pytest.mark.parametrize(
    "url",
    [
        f"redis://alice:pa/{SECRET}@127.0.0.1:99999/0",  # a port out of range
        f"redis://alice:pa ss{SECRET}@127.0.0.1:6379/0",  # a raw space
        f"redis://alice:{SECRET}@127.0.0.1:6379/x",  # a db that is not a number
        f"redis://alice:{SECRET}@127.0.0.1:6379/0?password=x",  # a credential in the query
        f"http://alice:{SECRET}@127.0.0.1:6379/0",
    ],
)
def test_a_malformed_url_is_one_line_that_hides_the_password(url: str) -> None:
    with pytest.raises(ValueError, match="Redis URL") as failed:
        parse_redis_url(url)
    assert SECRET not in str(failed.value)
    _status_says_one_line(url, exit_status=2)


@pytest.mark.parametrize("scheme", ["redis", "redis+cluster", "redis+sentinel"])
def test_no_reachable_server_is_one_line_and_exit_3_for_every_url_form(scheme: str) -> None:
    # A cluster with no reachable node failed in coredis's own context manager, outside
    # the requests that are translated: a 133-line traceback and exit 1 (issue 39).
    port = free_port()  # nobody listens there
    url = f"{scheme}://alice:{SECRET}@127.0.0.1:{port}" + (
        "/mymaster" if "sentinel" in scheme else ""
    )
    _status_says_one_line(url, exit_status=3)


def _status_says_one_line(url: str, *, exit_status: int) -> None:
    """`clonegate status --redis URL` ends with ``exit_status`` and one error line that
    does not show the password."""
    result = subprocess.run(
        [sys.executable, "-m", "clonegate", "status", "--redis", url],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == exit_status, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("clonegate: error:")
    assert SECRET not in result.stderr + result.stdout


def test_messages_redact_a_raw_at_in_a_password() -> None:
    text = f"cannot reach redis://alice:p@ss{SECRET}@127.0.0.1:6379/0 (refused)"
    assert redact(text) == "cannot reach redis://***@127.0.0.1:6379/0 (refused)"


async def _scan_redis(url: str) -> str:
    """Every key and value in Redis, as one text."""
    seen: list[str] = []
    async with open_redis(url) as redis:
        async for key in redis.scan_iter(match="*"):
            seen.append(key)
            kind = await redis.type(key)
            if kind == "string":
                seen.append(str(await redis.get(key)))
            elif kind == "hash":
                seen.append(str(await redis.hgetall(key)))
            elif kind == "list":
                seen.append(str(await redis.lrange(key, 0, -1)))
            elif kind == "set":
                seen.append(str(await redis.smembers(key)))
            elif kind == "zset":
                seen.append(str(await redis.zrange(key, 0, -1, withscores=True)))
            elif kind == "stream":
                seen.extend(str(entry) for entry in await redis.xrange(key))
            else:
                seen.append(f"unread {kind}")
        seen.append(str(await redis.acl_log()))  # failed logins, with what they sent
    return "\n".join(seen)


async def test_a_password_with_any_characters_connects_and_is_never_seen(
    tmp_path: Path, tmpdir_env: Path, own_redis: RedisServer, server_program: Callable[[str], str]
) -> None:
    await trio.run_process(
        [server_program("redis-cli"), "-p", str(own_redis.port),
         "ACL", "SETUSER", USER, "on", f">{PASSWORD}", "~*", "&*", "+@all"],
        capture_stdout=True,
    )  # fmt: skip
    served = tmp_path / "served"
    served.mkdir()
    make_repo(served, "r0", files={"tests/test_a.py": b"def test_one():\n    pass\n"})
    encoded = _encoded(own_redis.port)
    env = {**os.environ, "CLONEGATE_REDIS_URL": encoded}
    outputs: list[str] = []

    async def clonegate(*args: str, code: int = 0, environment: dict[str, str] = env) -> None:
        done = await trio.run_process(
            [sys.executable, "-m", "clonegate", *args],
            capture_stdout=True,
            capture_stderr=True,
            env=environment,
            cwd=ROOT,
            check=False,
        )
        shown = done.stdout.decode() + done.stderr.decode()
        assert done.returncode == code, shown
        outputs.append(shown)

    with git_daemon(served) as daemon:
        await clonegate("submit", "--run", "pw", daemon.url("r0"))
        await clonegate("worker", "-v", "--cluster-limit", "2", "--host-limit", "1",
                        "--exit-when-done")  # fmt: skip
        await clonegate("results", "pw", "--redis", encoded, environment=dict(os.environ))
        await clonegate("results", "pw", "--format", "table")
        await clonegate("status", "pw")
        await clonegate("status")
        # The password as written in a file, the URL without it.
        password_file = tmp_path / "redis-password"
        password_file.write_text(f"{PASSWORD}\n")
        no_password = f"redis://{quote(USER, safe='')}@127.0.0.1:{own_redis.port}/0"
        await clonegate(
            "status",
            "pw",
            environment={
                **os.environ,
                "CLONEGATE_REDIS_URL": no_password,
                "CLONEGATE_REDIS_PASSWORD_FILE": str(password_file),
            },
        )
        # The same password unencoded: a wrong one (its "%41" is an "A"), still hidden.
        raw = f"redis://{quote(USER, safe='')}:{PASSWORD}@127.0.0.1:{own_redis.port}/0"
        await clonegate("status", "--redis", raw, code=3, environment=dict(os.environ))
    assert '"status": "ok"' in outputs[2]
    assert "ok" in outputs[3]
    assert "1 done" in outputs[4]
    assert "1 done" in outputs[6]
    everything = "\n".join(outputs) + await _scan_redis(own_redis.url)
    for secret in (SECRET, PASSWORD, quote(PASSWORD, safe="")):
        assert secret not in everything
