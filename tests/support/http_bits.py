"""Pieces of a small HTTP/1.0 front on 127.0.0.1 (throttling_http.py): a request's
head, its first line, an answer's status, and a request body relayed on."""

from __future__ import annotations

import contextlib

import trio


async def read_head(client: trio.SocketStream) -> bytes | None:
    """A request's line and headers (and whatever of its body came with them); None if
    the client closed or broke the connection first. Stops past 64 KiB."""
    request = b""
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        while b"\r\n\r\n" not in request and len(request) <= 65536:
            piece = await client.receive_some(65536)
            if not piece:
                return None
            request += piece
        return request
    return None


def request_line(request: bytes) -> tuple[str, str]:
    parts = request.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
    return (parts[0], parts[1]) if len(parts) >= 2 else (parts[0], "")


def status_of(response: bytes) -> int:
    parts = response.split(b"\r\n", 1)[0].split(b" ")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


async def relay(client: trio.SocketStream, upstream: trio.SocketStream) -> None:
    """The rest of a request's body, from the client to the app behind."""
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        while data := await client.receive_some(65536):
            await upstream.send_all(data)
