"""Kept clones: a stable ``<dir>/<host>/<path>`` layout that a second run updates in place."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

from clonegate import (
    CloneSettings,
    DulwichVCS,
    parse_repo_url,
    with_global_limiter,
    with_keep_clones,
)
from clonegate._app import compose
from clonegate.errors import LeaseLostError, RepositoryNotFoundError, StorageError, TransportError

from .support.repos import FixtureRepo, git, make_repo
from .support.servers import GitDaemon, git_daemon


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[GitDaemon, FixtureRepo, Path]]:
    """A repository of this test's own, which the test can push new commits to."""
    root = tmp_path / "served"
    root.mkdir()
    repo = make_repo(root, "moving", commits=2)
    with git_daemon(root) as daemon:
        yield daemon, repo, root


def push_commit_removing(root: Path, path: str) -> str:
    work = root / "moving.work"
    git("rm", "-q", path, cwd=work)
    git("commit", "-q", "-m", f"remove {path}", cwd=work)
    git("push", "-q", str(root / "moving.git"), "main", cwd=work)
    return git("rev-parse", "HEAD", cwd=work)


async def test_a_kept_clone_lives_at_host_and_path_and_is_updated_in_place(
    served: tuple[GitDaemon, FixtureRepo, Path], tmp_path: Path
) -> None:
    daemon, repo, root = served
    keep = tmp_path / "keep"
    vcs = DulwichVCS(CloneSettings(checkout=True, keep_in=keep))
    first = await vcs.clone(daemon.url("moving"))
    place = keep / f"127.0.0.1_{daemon.port}" / "moving"
    assert first.path == place
    assert first.commit == repo.head
    assert (place / "file0.txt").read_text() == "commit 0\n"
    # Something only this directory holds: a clone made again would not have it.
    marker = place / ".git" / "marker"
    marker.write_text("still the same directory")
    inode = place.stat().st_ino

    new_head = push_commit_removing(root, "file0.txt")
    second = await vcs.clone(daemon.url("moving"))

    assert second.path == place
    assert (second.commit, second.branch) == (new_head, "main")
    assert place.stat().st_ino == inode  # updated, not cloned again
    assert marker.exists()
    assert git("-C", str(place), "rev-parse", "HEAD") == new_head
    assert not (place / "file0.txt").exists()  # the working tree follows, deletions too
    assert (place / "file1.txt").exists()
    assert git("-C", str(place), "status", "--porcelain") == ""
    assert git("-C", str(place), "config", "remote.origin.url") == daemon.url("moving")
    assert sorted(p.name for p in place.parent.iterdir()) == ["moving"]  # nothing staged left


async def test_a_bare_kept_clone_is_updated_in_place_too(
    served: tuple[GitDaemon, FixtureRepo, Path], tmp_path: Path
) -> None:
    daemon, _, root = served
    vcs = DulwichVCS(CloneSettings(keep_in=tmp_path / "keep"))  # no working tree
    first = await vcs.clone(daemon.url("moving"))
    inode = first.path.stat().st_ino
    new_head = push_commit_removing(root, "file1.txt")
    second = await vcs.clone(daemon.url("moving"))
    assert second.path == first.path
    assert second.path.stat().st_ino == inode
    assert git("-C", str(second.path), "rev-parse", "HEAD") == new_head
    # A kept clone with a working tree is something else: refused, left as it is.
    with pytest.raises(StorageError, match="not one with a working tree"):
        await DulwichVCS(CloneSettings(checkout=True, keep_in=tmp_path / "keep")).clone(
            daemon.url("moving")
        )
    assert git("-C", str(second.path), "rev-parse", "HEAD") == new_head


async def test_anything_else_at_the_place_is_refused_and_left_alone(
    served: tuple[GitDaemon, FixtureRepo, Path], tmp_path: Path
) -> None:
    daemon, _, root = served
    keep = tmp_path / "keep"
    place = keep / f"127.0.0.1_{daemon.port}" / "moving"
    vcs = DulwichVCS(CloneSettings(checkout=True, keep_in=keep))

    place.mkdir(parents=True)
    (place / "notes.txt").write_text("mine")
    with pytest.raises(StorageError, match="is not a git clone"):
        await vcs.clone(daemon.url("moving"))
    assert [p.name for p in place.iterdir()] == ["notes.txt"]

    # A clone, but of another URL (the same path from another server, say).
    (place / "notes.txt").unlink()
    place.rmdir()
    git("clone", "-q", str(root / "moving.git"), str(place))
    with pytest.raises(StorageError, match="clone of another repository"):
        await vcs.clone(daemon.url("moving"))
    assert git("-C", str(place), "config", "remote.origin.url") == str(root / "moving.git")
    assert sorted(p.name for p in place.parent.iterdir()) == ["moving"]


async def test_a_failed_update_keeps_the_old_clone_and_a_failed_clone_leaves_nothing(
    served: tuple[GitDaemon, FixtureRepo, Path], tmp_path: Path
) -> None:
    daemon, repo, _ = served
    keep = tmp_path / "keep"
    vcs = DulwichVCS(CloneSettings(checkout=True, keep_in=keep, read_timeout=5))
    kept = await vcs.clone(daemon.url("moving"))

    with pytest.raises(RepositoryNotFoundError):
        await vcs.clone(daemon.url("missing"))
    assert sorted(p.name for p in kept.path.parent.iterdir()) == ["moving"]

    daemon.kill()
    with pytest.raises(TransportError):
        await vcs.clone(daemon.url("moving"))
    assert git("-C", str(kept.path), "rev-parse", "HEAD") == repo.head
    assert (kept.path / "file0.txt").exists()


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("https://GitHub.com/org/repo.git", "github.com/org/repo"),
        ("git://127.0.0.1:9999/a/../../b.git/", "127.0.0.1_9999/a/b"),
        ("ssh://git@host:22/~user/r", "host/user/r"),
        ("git@host:org/r.git", "host/org/r"),
        ("https://host/.git", "host/repository"),
        ("https://host/%2e%2e/%2e%2e/etc", "host/etc"),
        ("https://host/a%3Bb/.hidden/c%20d", "host/a-b/hidden/c-d"),
        ("/srv/git/x.git", "local/srv/git/x"),
    ],
)
def test_the_kept_path_is_readable_and_never_leaves_the_keep_directory(url: str, kept: str) -> None:
    path = parse_repo_url(url, allow_local=True).kept_path
    assert str(path) == kept
    assert not path.is_absolute()
    assert ".." not in path.parts


class _LeaseLostOnRelease:
    """A shared limit that lets the clone finish, then finds its lease was lost (as a
    RedisSemaphore told to let its holder finish does): bookkeeping that fails after
    a successful clone."""

    @asynccontextmanager
    async def hold(self, n: int = 1) -> AsyncIterator[None]:
        await trio.lowlevel.checkpoint()
        yield
        raise LeaseLostError("the lease ended while the clone ran")


@pytest.mark.parametrize("keep_clones", [True, False])
async def test_a_failure_after_the_clone_removes_only_a_private_clone(
    served: tuple[GitDaemon, FixtureRepo, Path], tmp_path: Path, keep_clones: bool
) -> None:
    daemon, _repo, _root = served
    work = tmp_path / "work"
    work.mkdir()
    keep = (with_keep_clones(),) if keep_clones else ()
    settings = CloneSettings(keep_in=work) if keep_clones else CloneSettings(work_dir=work)
    uc = compose(*keep, with_global_limiter(_LeaseLostOnRelease()), clone=settings, pool=None)
    async with uc.analyze_many([daemon.url("moving")]) as batch:
        (report,) = [report async for report in batch]
    assert report.error is not None
    assert report.error.kind == "lease_lost"
    place = work / f"127.0.0.1_{daemon.port}" / "moving"
    if keep_clones:  # the user's: it stays, whole
        assert (place / "file0.txt").read_text() == "commit 0\n"
    else:
        assert list(work.iterdir()) == []
