"""Real git servers on 127.0.0.1 for the tests: `git daemon` (git://), dulwich's
smart-HTTP WSGI app in a threaded server (http://, https://, optionally behind basic
auth), sshd, and raw TCP servers that never answer or answer garbage. Started and
stopped by fixtures in conftest.py; the repositories they serve are made by
repos.py, the throttling proxy is in proxy.py, the process helpers in processes.py.
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from .server_programs import server_program

TOKEN = "s3cr3t-t0ken-value"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_listening(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)  # polling a server's readiness at start-up, not a test


@dataclass
class GitDaemon:
    port: int
    process: subprocess.Popen[bytes]

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}.git"

    def kill(self) -> None:
        # git daemon forks a child per connection, in its process group.
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@contextmanager
def git_daemon(base: Path, port: int | None = None, *options: str) -> Iterator[GitDaemon]:
    port = port or free_port()
    process = subprocess.Popen(
        [
            "git",
            "daemon",
            f"--base-path={base}",
            "--export-all",
            "--reuseaddr",
            "--listen=127.0.0.1",
            "--listen=::1",  # IPv6 literals are URLs too (tests/test_clone.py)
            f"--port={port}",
            *options,
            str(base),
        ],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    daemon = GitDaemon(port, process)
    try:
        wait_until_listening(port)
        yield daemon
    finally:
        daemon.kill()


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def _basic_auth(app: Callable[..., Any], prefix: str, token: str) -> Callable[..., Any]:
    expected = "Basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()

    def middleware(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "")
        if path.startswith(prefix):
            if environ.get("HTTP_AUTHORIZATION") != expected:
                start_response("401 Unauthorized", [("WWW-Authenticate", 'Basic realm="git"')])
                return [b"authentication required\n"]
            environ["PATH_INFO"] = path[len(prefix) - 1 :]
        return app(environ, start_response)

    return middleware


@dataclass
class HttpGitServer:
    port: int
    scheme: str = "http"

    def url(self, name: str, *, private: bool = False, userinfo: str = "") -> str:
        at = f"{userinfo}@" if userinfo else ""
        where = f"{self.scheme}://{at}127.0.0.1:{self.port}"
        return f"{where}/{'private/' if private else ''}{name}.git"


@contextmanager
def http_git_server(
    base: Path,
    tls: ssl.SSLContext | None = None,
    wrap: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None,
) -> Iterator[HttpGitServer]:
    """dulwich's smart-HTTP app over every ``*.git`` in ``base``; ``/private/...`` needs TOKEN.
    ``wrap``: a WSGI middleware put in front (one that fails or records requests)."""
    from dulwich.repo import Repo
    from dulwich.server import DictBackend
    from dulwich.web import make_wsgi_chain

    repos = {f"/{p.name}": Repo(str(p)) for p in sorted(base.glob("*.git"))}
    app = _basic_auth(make_wsgi_chain(DictBackend(repos)), "/private/", TOKEN)  # type: ignore[arg-type]
    if wrap is not None:
        app = wrap(app)
    server = make_server("127.0.0.1", 0, app, _ThreadingWSGIServer, _QuietHandler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    with serving(server, repos.values()):
        yield HttpGitServer(server.server_port, "https" if tls else "http")


@contextmanager
def serving(server: Any, repos: Iterable[Any]) -> Iterator[None]:
    """Run ``server.serve_forever`` in a thread for the block; then stop it, close it,
    and close the dulwich ``repos`` it served."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        for repo in repos:
            repo.close()


@contextmanager
def raw_tcp_server(on_connect: Callable[[socket.socket], None]) -> Iterator[int]:
    """Accept connections on 127.0.0.1 and hand each to ``on_connect`` in its own thread."""
    listener = socket.create_server(("127.0.0.1", 0))
    connections: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            connections.append(conn)
            threading.Thread(target=on_connect, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(); close() does not
        listener.close()
        thread.join()
        for conn in connections:
            conn.close()


def read_request_head(conn: socket.socket | ssl.SSLSocket) -> bytes:
    """An HTTP request's line and headers, read from ``conn``; b"" if it closed first."""
    request = b""
    while b"\r\n\r\n" not in request:
        piece = conn.recv(4096)
        if not piece:
            return b""
        request += piece
    return request


def never_answer(conn: socket.socket) -> None:
    """Accept, read whatever comes, say nothing (the connection stays open)."""
    try:
        while conn.recv(65536):
            pass
    except OSError:
        pass


def answer_garbage(conn: socket.socket) -> None:
    try:
        conn.recv(65536)
        conn.sendall(b"\x00\xffthis is not git\r\n" * 64)
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        pass


@dataclass
class SshServer:
    port: int
    ssh_command: str  # what a client needs: its key and the server's known host key

    def url(self, base: Path, name: str) -> str:
        return f"ssh://root@127.0.0.1:{self.port}{base}/{name}.git"


@contextmanager
def ssh_server(workdir: Path, forced_command: str | None = None) -> Iterator[SshServer]:
    """OpenSSH's sshd on 127.0.0.1, accepting one generated client key; git runs through it.

    With ``forced_command``, the key runs that command instead of what the client asks
    (``command=`` in authorized_keys): a server that speaks whatever the command says.
    """
    sshd = server_program("sshd")
    workdir.mkdir(parents=True, exist_ok=True)
    host_key, client_key = workdir / "host_ed25519", workdir / "client_ed25519"
    for key in (host_key, client_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    forced = f'command="{forced_command}" ' if forced_command else ""
    (workdir / "authorized_keys").write_text(forced + client_key.with_suffix(".pub").read_text())
    port = free_port()
    host_pub = host_key.with_suffix(".pub").read_text().split()
    (workdir / "known_hosts").write_text(
        "".join(f"[{ip}]:{port} {host_pub[0]} {host_pub[1]}\n" for ip in ("127.0.0.1", "::1"))
    )
    config = workdir / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nListenAddress [::1]\nHostKey {host_key}\n"
        f"AuthorizedKeysFile {workdir / 'authorized_keys'}\nPidFile none\nStrictModes no\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "PermitRootLogin prohibit-password\n"
    )
    Path("/run/sshd").mkdir(exist_ok=True)  # privilege separation directory
    process = subprocess.Popen(
        [sshd, "-D", "-e", "-f", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until_listening(port)
        yield SshServer(
            port,
            f"ssh -i {client_key} -o UserKnownHostsFile={workdir / 'known_hosts'}"
            " -o IdentitiesOnly=yes",
        )
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextmanager
def https_git_server(base: Path, workdir: Path) -> Iterator[tuple[HttpGitServer, Path]]:
    """The smart-HTTP server behind TLS, with a certificate from a throwaway CA.

    Yields the server and the CA bundle a client must trust.
    """
    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    ca_file = workdir / "ca.pem"
    workdir.mkdir(parents=True, exist_ok=True)
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    with http_git_server(base, tls=context) as server:
        yield server, ca_file
