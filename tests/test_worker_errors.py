"""What ``classify`` reads by text, read from the locked libraries themselves.

``classify`` goes by type wherever dulwich, urllib3, http.client and the OS give one;
a few cases exist only in words (dulwich's pkt-line errors, OpenSSL's certificate
failure, a server's ERR line). Each exception here is raised by the library in the
lock (dulwich's pkt-line reader, urllib3 against a socket on 127.0.0.1), never written
by hand: a new version that words it otherwise fails here, not in production. The
servers' own words (git daemon, ssh) are checked against real servers in
test_clone.py and test_hangups.py.
"""

from __future__ import annotations

import errno
import io
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import pytest
import trustme
import urllib3

from clonegate import ErrorKind
from clonegate._adapters.git.worker_errors import CERTIFICATE_FAILED, classify

from .support.servers import never_answer, raw_tcp_server

_MID_ANSWER = "the connection ended in the middle of the server's answer"
_MID_TRANSFER = "the connection broke during the transfer"


class _Limits:
    connect_timeout = 5.0
    read_timeout = 0.2
    max_memory = max_file_size = 1 << 30


def _classified(exc: BaseException, *, mid_transfer: bool = False) -> tuple[ErrorKind, str]:
    return classify(exc, _Limits(), has_credentials=False, mid_transfer=mid_transfer)


def _pkt_line_error(stream: bytes) -> BaseException:
    """What dulwich's pkt-line reader raises for ``stream``."""
    from dulwich.errors import GitProtocolError
    from dulwich.protocol import Protocol

    with pytest.raises(GitProtocolError) as caught:
        Protocol(io.BytesIO(stream).read, lambda data: None).read_pkt_line()
    return caught.value


@pytest.mark.parametrize(
    "stream",
    [
        b"00",  # inside the length prefix
        b"0010abc",  # inside the line
        b"0404" + b"x" * 10,  # a count that holds "404" is no server's "404 Not Found"
    ],
)
@pytest.mark.parametrize("mid_transfer", [False, True])
def test_dulwichs_words_for_a_stream_cut_inside_a_pkt_line(
    stream: bytes, mid_transfer: bool
) -> None:
    from dulwich.errors import GitProtocolError

    error = _pkt_line_error(stream)
    assert type(error) is GitProtocolError
    expected = _MID_TRANSFER if mid_transfer else _MID_ANSWER
    assert _classified(error, mid_transfer=mid_transfer) == (ErrorKind.CONNECTION_LOST, expected)


@pytest.mark.parametrize(
    ("stream", "words"),
    [
        (b"zz\xff0", "Invalid pkt-line length prefix"),  # four bytes, no length
        (b"0003", "Invalid pkt-line length: 0003"),
    ],
)
def test_dulwichs_words_for_a_length_that_is_none(stream: bytes, words: str) -> None:
    error = _pkt_line_error(stream)
    assert _classified(error) == (ErrorKind.PROTOCOL, f"git protocol error: {words}")


def test_an_empty_stream_is_a_hang_up_by_type() -> None:
    from dulwich.errors import HangupException

    error = _pkt_line_error(b"")
    assert type(error) is HangupException
    assert _classified(error) == (ErrorKind.CONNECTION_LOST, "the server hung up")
    assert _classified(error, mid_transfer=True) == (ErrorKind.CONNECTION_LOST, _MID_TRANSFER)


def test_an_err_line_says_what_is_missing_in_its_own_words() -> None:
    from dulwich.client import read_pkt_refs_v1
    from dulwich.errors import GitProtocolError

    # git daemon's words for a repository it does not serve (test_clone.py's
    # test_missing_repository reads them from a real git daemon).
    line = b"ERR access denied or repository not exported: /no-such.git\n"
    with pytest.raises(GitProtocolError) as caught:
        read_pkt_refs_v1(iter([line]))
    assert _classified(caught.value) == (ErrorKind.NOT_FOUND, "repository not found")


def _urllib3_error(port: int, *, tls: ssl.SSLContext | None = None) -> Exception:
    """What urllib3 raises for a GET on 127.0.0.1:``port`` (no retries)."""
    pool: urllib3.HTTPConnectionPool
    if tls is None:
        pool = urllib3.HTTPConnectionPool("127.0.0.1", port, retries=False, timeout=0.2)
    else:
        pool = urllib3.HTTPSConnectionPool("127.0.0.1", port, retries=False, ssl_context=tls)
    with pool, pytest.raises(urllib3.exceptions.HTTPError) as caught:
        pool.request("GET", "/x.git/info/refs", preload_content=True)
    return caught.value


def test_a_refused_connection_is_no_connect_timeout() -> None:
    # urllib3's NewConnectionError is a subclass of its ConnectTimeoutError.
    with socket.socket() as bound:  # bound, not listening: the kernel refuses
        bound.bind(("127.0.0.1", 0))
        error = _urllib3_error(bound.getsockname()[1])
    assert isinstance(error, urllib3.exceptions.NewConnectionError)
    assert _classified(error) == (ErrorKind.UNREACHABLE, "connection refused")


def test_a_silent_server_is_a_read_timeout_by_type() -> None:
    with raw_tcp_server(never_answer) as port:
        error = _urllib3_error(port)
    assert isinstance(error, urllib3.exceptions.ReadTimeoutError)
    assert _classified(error) == (
        ErrorKind.READ_TIMEOUT,
        "no answer within the 0.2 s read timeout",
    )


@contextmanager
def _tls_server(ca: trustme.CA) -> Iterator[int]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)

    def handshake(conn: socket.socket) -> None:
        try:
            with context.wrap_socket(conn, server_side=True) as tls:
                tls.recv(1)
        except (OSError, ssl.SSLError):
            pass  # the client refused the certificate

    with raw_tcp_server(handshake) as port:
        yield port


def test_an_untrusted_certificate_in_openssls_words() -> None:
    with _tls_server(trustme.CA()) as port:
        error = _urllib3_error(port, tls=ssl.create_default_context())
    assert isinstance(error, urllib3.exceptions.SSLError)
    assert _classified(error) == (ErrorKind.TRANSPORT, CERTIFICATE_FAILED)


def test_a_body_cut_short_is_an_incomplete_read_by_type() -> None:
    def short_body(conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
            conn.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    with raw_tcp_server(short_body) as port:
        error = _urllib3_error(port)
    assert isinstance(error, urllib3.exceptions.ProtocolError)
    assert _classified(error) == (ErrorKind.CONNECTION_LOST, _MID_ANSWER)


def test_a_refusal_of_a_repository_named_404_is_not_not_found() -> None:
    # dulwich words any status it does not map as "unexpected http resp 429 for URL":
    # the URL (its path r404.git, a port such as 40404) is the repository's name, not
    # the server's answer, and must not make a throttled clone read as not found.
    from dulwich.client import Urllib3HttpGitClient
    from dulwich.errors import GitProtocolError

    def too_many(conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n")
        except OSError:
            pass

    class Answers(urllib3.PoolManager):
        """Keeps each response: dulwich raises on a status without closing its own."""

        answers: ClassVar[list[urllib3.BaseHTTPResponse]] = []

        def request(self, *args: Any, **kwargs: Any) -> urllib3.BaseHTTPResponse:
            self.answers.append(super().request(*args, **kwargs))
            return self.answers[-1]

    with raw_tcp_server(too_many) as port, Answers() as pool:
        client = Urllib3HttpGitClient(f"http://127.0.0.1:{port}/", pool_manager=pool)
        with pytest.raises(GitProtocolError) as caught:
            client.get_refs("/r404.git")
        for answer in pool.answers:
            answer.close()
    assert "404" in str(caught.value)  # in the URL only
    assert _classified(caught.value)[0] is not ErrorKind.NOT_FOUND


def test_a_servers_words_for_a_rate_limit_are_throttled_a_files_name_is_not() -> None:
    from dulwich.client import read_pkt_refs_v1
    from dulwich.errors import GitProtocolError

    line = b"ERR rate limit exceeded: too many requests\n"  # what a forge says over git://
    with pytest.raises(GitProtocolError) as caught:
        read_pkt_refs_v1(iter([line]))
    assert _classified(caught.value) == (
        ErrorKind.THROTTLED,
        "the server asked for fewer requests: rate limit exceeded: too many requests",
    )
    local = OSError(errno.ENOENT, "No such file or directory", "docs/rate-limit.md")
    assert _classified(local)[0] is not ErrorKind.THROTTLED


@pytest.mark.parametrize(
    "words",
    [
        "ssh: connect to host git.example port 22: Connection timed out",
        "ssh: connect to host git.example port 22: No route to host",
    ],
)
def test_sshs_words_for_a_connect_that_got_no_answer_are_unreachable(words: str) -> None:
    from dulwich.errors import HangupException

    # What dulwich raises when ssh exits with these words on its stderr.
    error = HangupException([words.encode()])
    assert _classified(error)[0] is ErrorKind.UNREACHABLE
