"""``clonegate demo``: sample repositories served on 127.0.0.1 from inside this process.

The repositories are built with dulwich and served by dulwich's git:// server in a
thread, so the demo needs neither the git binary nor a network. The server sends at a
throttled rate, so that the clone limit is visible in the progress display.
"""

from __future__ import annotations

import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PYTEST = """import pytest


def test_health(): ...


@pytest.mark.parametrize("code", [200, 201, 204])
def test_status_codes(code): ...


@pytest.mark.skip(reason="needs a database")
def test_migrations(): ...


@pytest.mark.xfail(reason="known rounding bug")
def test_rounding(): ...


class TestOrders:
    def test_create(self): ...

    def test_cancel(self): ...
"""

UNITTEST = """import unittest


class LegacyTests(unittest.TestCase):
    def test_parse(self): ...

    @unittest.skip("slow")
    def test_export(self): ...
"""

JEST = """describe('cart', () => {
  it('adds items', () => {});
  it('removes items', () => {});
  it.todo('applies coupons');
  test.each([[1, 1], [2, 4]])('squares %i', (a, b) => {});
  xit('syncs offline', () => {});
});
"""

VITEST = """import { describe, it, expect } from 'vitest';

describe('format', () => {
  it('formats dates', () => { expect(1).toBe(1); });
  it.skip('formats currencies', () => {});
});
"""

TSX = """import { describe, it } from 'vitest';

describe('Button', () => {
  it('renders', () => { const b = <button>ok</button>; });
});
"""

GO = """package api

import "testing"

func TestHandler(t *testing.T) {
\tfor _, tc := range cases {
\t\tt.Run(tc.name, func(t *testing.T) {})
\t}
}

func TestRetry(t *testing.T) {
\tt.Skip("flaky on CI")
}
"""

JUNIT5 = """package demo;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

class CalculatorTest {
    @Test
    void adds() {}

    @Test
    @Disabled("not yet")
    void divides() {}
}
"""

RUST = """pub fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    #[test]
    fn adds() {}

    #[test]
    #[ignore]
    fn slow() {}

    #[tokio::test]
    async fn fetches() {}
}
"""


def _padding(prefix: str, count: int) -> dict[str, bytes]:
    # Ordinary source files, so that each clone takes a moment at the demo's rate.
    return {
        f"{prefix}/module_{i}.txt": (f"module {i}\n" + "data\n" * (40 + i % 30)).encode()
        for i in range(count)
    }


SAMPLES: dict[str, dict[str, bytes]] = {
    "python-service": {
        "tests/test_api.py": PYTEST.encode(),
        "tests/test_legacy.py": UNITTEST.encode(),
        "pytest.ini": b"[pytest]\n",
        **_padding("src", 150),
    },
    "web-frontend": {
        "src/__tests__/cart.test.js": JEST.encode(),
        "jest.config.js": b"module.exports = {};\n",
        "web/src/format.spec.ts": VITEST.encode(),
        "web/src/Button.test.tsx": TSX.encode(),
        **_padding("src/components", 150),
    },
    "go-api": {"api/handler_test.go": GO.encode(), **_padding("api", 150)},
    "java-library": {
        "src/test/java/demo/CalculatorTest.java": JUNIT5.encode(),
        **_padding("src/main/resources", 150),
    },
    "rust-crate": {"src/lib.rs": RUST.encode(), **_padding("assets", 150)},
    "polyglot-monorepo": {
        "services/py/tests/test_api.py": PYTEST.encode(),
        "services/go/handler_test.go": GO.encode(),
        "apps/web/src/cart.test.js": JEST.encode(),
        "apps/web/package.json": b'{"devDependencies": {"jest": "^29"}}\n',
        **_padding("docs", 300),
    },
}


def build_repository(path: Path, files: dict[str, bytes]) -> None:
    """A bare repository at ``path`` with one commit holding ``files``; dulwich only."""
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    repo = Repo.init_bare(str(path), mkdir=True)
    try:
        store = repo.object_store

        def write_tree(entries: dict[str, Any]) -> Any:
            tree: Any = Tree()
            for name, value in sorted(entries.items()):
                if isinstance(value, dict):
                    tree.add(name.encode(), 0o040000, write_tree(value))
                else:
                    blob = Blob.from_string(value)
                    store.add_object(blob)
                    tree.add(name.encode(), 0o100644, blob.id)
            store.add_object(tree)
            return tree.id

        nested: dict[str, Any] = {}
        for file_path, data in files.items():
            *dirs, name = file_path.split("/")
            node = nested
            for d in dirs:
                node = node.setdefault(d, {})
            node[name] = data
        commit = Commit()
        commit.tree = write_tree(nested)
        commit.author = commit.committer = b"clonegate demo <demo@example.invalid>"
        commit.author_time = commit.commit_time = int(time.time())
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = b"Sample repository for the clonegate demo\n"
        store.add_object(commit)
        refs: Any = repo.refs
        refs[b"refs/heads/main"] = commit.id
        refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
    finally:
        repo.close()


@contextmanager
def serve(root: Path, bytes_per_second: int) -> Iterator[int]:
    """Serve every ``*.git`` under ``root`` on git://127.0.0.1:<port>; yields the port."""
    from dulwich.repo import Repo
    from dulwich.server import DictBackend, TCPGitRequestHandler, TCPGitServer

    class ThrottledWriter:
        def __init__(self, wfile: Any) -> None:
            self._wfile = wfile

        def write(self, data: bytes) -> int:
            for start in range(0, len(data), 16384):
                chunk = data[start : start + 16384]
                self._wfile.write(chunk)
                time.sleep(len(chunk) / bytes_per_second)  # the throttle itself
            return len(data)

        def __getattr__(self, name: str) -> Any:  # flush, close, closed
            return getattr(self._wfile, name)

    class Handler(TCPGitRequestHandler):
        def setup(self) -> None:
            super().setup()
            self.wfile = ThrottledWriter(self.wfile)  # type: ignore[assignment]

    class Server(socketserver.ThreadingMixIn, TCPGitServer):
        daemon_threads = True

        def _make_handler(self, request: Any, client_address: Any, server: Any) -> Any:
            return Handler(self.handlers, request, client_address, server)

    repos = {f"/{p.name}": Repo(str(p)) for p in sorted(root.glob("*.git"))}
    server = Server(DictBackend(repos), "127.0.0.1", 0)  # type: ignore[arg-type]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        for repo in repos.values():
            repo.close()
