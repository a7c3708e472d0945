"""A clean-up that fails never hides why the clone failed (issue 38): out of file
descriptors, removing a failed clone's directory raised an OSError that replaced the
clone's own error (``clone_error`` and a traceback in a batch). Now the clone's error
is raised, one warning line names what is left, and the leftover keeps a name the next
run's sweep removes. Real clones from git daemon on 127.0.0.1; the descriptors are
taken from the moment the clone's worker is running, so the failure is deterministic.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import clonegate._adapters.clones
from clonegate import CloneSettings, DulwichVCS
from clonegate.errors import RepositoryNotFoundError

from .support.servers import GitDaemon


class _Descriptors:
    """Every free file descriptor of this process, taken on :meth:`take_all`."""

    def __init__(self) -> None:
        self.taken: list[int] = []

    def take_all(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                self.taken.append(os.open(os.devnull, os.O_RDONLY))

    def give_back(self) -> None:
        for fd in self.taken:
            os.close(fd)
        self.taken.clear()


@pytest.fixture
def descriptors() -> Iterator[_Descriptors]:
    held = _Descriptors()
    try:
        yield held
    finally:
        held.give_back()


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


async def test_a_kept_clone_whose_clean_up_fails_raises_its_own_error(
    daemon: GitDaemon,
    tmp_path: Path,
    descriptors: _Descriptors,
    caplog: pytest.LogCaptureFixture,
) -> None:
    keep = tmp_path / "keep"
    vcs = DulwichVCS(CloneSettings(checkout=True, keep_in=keep))
    with caplog.at_level(logging.WARNING), pytest.raises(RepositoryNotFoundError):
        await vcs.clone(daemon.url("missing"), on_ready=descriptors.take_all)
    descriptors.give_back()
    (warning,) = _warnings(caplog)
    assert "\n" not in warning
    (left,) = (keep / f"127.0.0.1_{daemon.port}").iterdir()
    # The staging directory, named for its owner: the next run's sweep removes it.
    assert left.name.startswith(f".clonegate-{os.getpid()}.")
    assert f"{left} (Too many open files); a later run removes it" in warning


async def test_a_private_clone_whose_clean_up_fails_raises_its_own_error(
    daemon: GitDaemon,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The kept case above fails for real; here the removal is made to fail (the
    # worker's own descriptors, freed as it ends, would let a private one succeed).
    def cannot_remove(path: Path) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(clonegate._adapters.clones, "remove_tree", cannot_remove)
    work = tmp_path / "work"
    work.mkdir()
    vcs = DulwichVCS(CloneSettings(work_dir=work))
    with caplog.at_level(logging.WARNING), pytest.raises(RepositoryNotFoundError):
        await vcs.clone(daemon.url("missing"))
    (warning,) = _warnings(caplog)
    assert "\n" not in warning
    (left,) = work.iterdir()
    assert left.name.startswith(f"clonegate-{os.getpid()}.")  # its owner, for a sweep
    assert f"{left} (Permission denied); a later run removes it" in warning


async def test_a_source_is_removed_by_what_its_vcs_gave_and_never_silently_kept(
    tmp_path: Path,
) -> None:
    from datetime import UTC, datetime

    from clonegate import ClonedSource

    root = tmp_path / "clone"
    (root / "objects").mkdir(parents=True)
    when = datetime(2024, 1, 1, tzinfo=UTC)
    without = ClonedSource("u", root, "main", "a" * 40, when, 0, False, root)
    with pytest.raises(TypeError, match="no remove="):  # the domain removes nothing itself
        await without.aclose()
    assert root.exists()
    source = ClonedSource(
        "u", root, "main", "a" * 40, when, 0, False, root, remove=clonegate._adapters.clones.discard
    )
    await source.aclose()
    await source.aclose()  # idempotent
    assert not root.exists()
