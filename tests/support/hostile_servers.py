"""Servers that misbehave on purpose, on 127.0.0.1, and record what clients sent them.

- :func:`recording_https`: dulwich's smart-HTTP app behind TLS that logs every
  request (host, path, ``Authorization``), challenges for ``/private/`` with a 401,
  and answers redirects the test sets up.
- :func:`renaming_git_daemon`: a git:// server that relays ``git upload-pack`` but
  advertises the HEAD branch under a name of the test's choice (git itself would
  never create it), so that clients see hostile ref names in a real clone.
"""

from __future__ import annotations

import base64
import contextlib
import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from wsgiref.simple_server import make_server

from .servers import TOKEN, _QuietHandler, _ThreadingWSGIServer, raw_tcp_server, serving

EXPECTED = "Basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()


@dataclass(frozen=True)
class Request:
    host: str  # the Host header: the name the client used, and the port
    path: str  # with the query
    authorization: str | None


@dataclass
class RecordingServer:
    port: int
    requests: list[Request] = field(default_factory=list)
    # path prefix -> (status, target prefix): the rest of the path and the query follow.
    redirects: dict[str, tuple[int, str]] = field(default_factory=dict)

    def url(self, path: str, *, host: str = "127.0.0.1", userinfo: str = "") -> str:
        """``https://[userinfo@]host:port/path``; ``host`` as it goes in a URL (``[::1]``)."""
        at = f"{userinfo}@" if userinfo else ""
        return f"https://{at}{host}:{self.port}{path}"

    def sent_to(self, host: str) -> list[str | None]:
        """The ``Authorization`` of every request that came for ``host`` (with port)."""
        return [r.authorization for r in self.requests if r.host == host]


def tls_contexts(workdir: Path) -> tuple[ssl.SSLContext, Path]:
    """A server context with a certificate for 127.0.0.1 and localhost, and the CA file."""
    import trustme

    ca = trustme.CA()
    workdir.mkdir(parents=True, exist_ok=True)
    ca_file = workdir / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "::1", "localhost").configure_cert(context)
    return context, ca_file


class _IPv6Server(_ThreadingWSGIServer):
    address_family = socket.AF_INET6


@contextmanager
def recording_https(
    base: Path, tls: ssl.SSLContext, *, bind: str = "127.0.0.1"
) -> Iterator[RecordingServer]:
    """Every ``*.git`` in ``base`` over https, recorded; ``/private/<name>.git`` needs TOKEN.

    ``bind``: the address to listen on (``::1`` for IPv6)."""
    from dulwich.repo import Repo
    from dulwich.server import DictBackend
    from dulwich.web import make_wsgi_chain

    repos = {f"/{p.name}": Repo(str(p)) for p in sorted(base.glob("*.git"))}
    git_app = make_wsgi_chain(DictBackend(repos))  # type: ignore[arg-type]
    server_state = RecordingServer(0)

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "")
        query = environ.get("QUERY_STRING", "")
        authorization = environ.get("HTTP_AUTHORIZATION")
        server_state.requests.append(
            Request(environ.get("HTTP_HOST", ""), f"{path}?{query}", authorization)
        )
        for prefix, (status, target) in server_state.redirects.items():
            if path.startswith(prefix):
                location = target + path[len(prefix) :] + (f"?{query}" if query else "")
                start_response(f"{status} Redirect", [("Location", location)])
                return [b"moved\n"]
        if path.startswith("/private/"):
            if authorization != EXPECTED:
                start_response("401 Unauthorized", [("WWW-Authenticate", 'Basic realm="git"')])
                return [b"authentication required\n"]
            environ["PATH_INFO"] = path[len("/private") :]
        return git_app(environ, start_response)

    server_class = _IPv6Server if ":" in bind else _ThreadingWSGIServer
    server = make_server(bind, 0, app, server_class, _QuietHandler)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    server_state.port = server.server_port
    with serving(server, repos.values()):
        yield server_state


def _pkt(data: bytes) -> bytes:
    return b"%04x" % (len(data) + 4) + data


def _read_pkt(conn: socket.socket) -> bytes | None:
    """One pkt-line's payload (None for a flush-pkt), from a blocking socket."""
    size = int(_read_exactly(conn, 4), 16)
    return None if size == 0 else _read_exactly(conn, size - 4)


def _read_exactly(conn: socket.socket | Any, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data)) if isinstance(conn, socket.socket) else conn.read(n)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


@contextmanager
def renaming_git_daemon(repository: Path, branch: bytes) -> Iterator[int]:
    """A git:// server for ``repository`` whose HEAD branch is advertised as ``branch``.

    It runs ``git upload-pack`` for each connection (protocol v0), rewrites the
    branch's name in the ref advertisement (and in the ``symref`` capability), and
    relays everything else unchanged: the pack a client gets is real.
    """
    head_ref = subprocess.run(
        ["git", "-C", str(repository), "symbolic-ref", "HEAD"],
        capture_output=True,
        check=True,
    ).stdout.strip()

    def serve(conn: socket.socket) -> None:
        with contextlib.suppress(OSError, ConnectionError, ValueError):
            _read_pkt(conn)  # "git-upload-pack /path\0host=...\0": the one repository
            with subprocess.Popen(
                ["git", "upload-pack", "--strict", str(repository)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env={"GIT_PROTOCOL": "", "PATH": "/usr/bin:/bin"},
            ) as process:  # on exit: pipes closed, process waited for
                assert process.stdin is not None
                assert process.stdout is not None
                try:
                    _relay(conn, process.stdout, process.stdin, head_ref, b"refs/heads/" + branch)
                finally:
                    process.kill()

    with raw_tcp_server(serve) as port:
        yield port


def _relay(conn: socket.socket, out: Any, into: Any, old: bytes, new: bytes) -> None:
    # The advertisement, renamed, until its flush-pkt.
    while True:
        size = int(_read_exactly(out, 4), 16)
        if size == 0:
            conn.sendall(b"0000")
            break
        line = _read_exactly(out, size - 4)
        conn.sendall(_pkt(line.replace(b" " + old, b" " + new).replace(b":" + old, b":" + new)))

    def upstream() -> None:
        # ValueError: the relay ended and closed the pipe first.
        with contextlib.suppress(OSError, ValueError):
            while data := conn.recv(65536):
                into.write(data)
                into.flush()
        with contextlib.suppress(OSError, ValueError):
            into.close()

    threading.Thread(target=upstream, daemon=True).start()
    while data := out.read1(65536):
        conn.sendall(data)
    conn.shutdown(socket.SHUT_WR)
