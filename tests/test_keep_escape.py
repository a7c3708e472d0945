"""Kept clones never escape the keep directory (issue 38): no symbolic link below it is
followed, whoever planted it (another kept clone's repository, or a swap mid-clone)."""

from __future__ import annotations

import errno
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from clonegate import CloneSettings, DulwichVCS, ErrorKind
from clonegate._adapters.git.worker_errors import classify
from clonegate.errors import InvalidRepositoryError, StorageError

from .support.keep_scene import Scene, clonegate_analyze, snapshot, staging_left
from .support.repos import fast_import, git, make_repo
from .support.servers import git_daemon


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[Scene]:
    served = tmp_path / "served"
    served.mkdir()
    make_repo(served, "org/team/repo", commits=2)
    victim = tmp_path / "victim"
    victim.mkdir()
    with git_daemon(served) as daemon:
        yield Scene(daemon, served, tmp_path / "keep", victim)


@pytest.mark.parametrize("level", ["HOST", "HOST/org", "HOST/org/team"])
async def test_a_symlink_at_any_directory_of_the_kept_path_is_refused(
    scene: Scene, level: str
) -> None:
    # The host directory, a path component, and the staging directory's parent.
    planted = scene.keep / level.replace("HOST", scene.host.name)
    planted.parent.mkdir(parents=True)
    planted.symlink_to(scene.victim, target_is_directory=True)

    with pytest.raises(StorageError, match="is a symbolic link") as refused:
        await DulwichVCS(CloneSettings(checkout=True, keep_in=scene.keep)).clone(
            scene.daemon.url("org/team/repo")
        )

    assert str(planted) in refused.value.reason
    assert "\n" not in str(refused.value)
    assert snapshot(scene.victim) == {}
    assert staging_left(scene.keep) == []


async def test_a_symlink_at_the_place_itself_is_not_updated_through(scene: Scene) -> None:
    # Outside the keep directory, someone's clone of the same URL, with work of theirs.
    url = scene.daemon.url("org/team/repo")
    git("clone", "-q", url, str(scene.victim / "clone"))
    (scene.victim / "clone" / "file0.txt").write_text("my uncommitted work\n")
    work = scene.served / "org/team/repo.work"
    (work / "new.txt").write_text("new\n")
    git("add", "new.txt", cwd=work)
    git("commit", "-q", "-m", "new", cwd=work)
    git("push", "-q", str(scene.served / "org/team/repo.git"), "main", cwd=work)
    place = scene.host / "org" / "team" / "repo"
    place.parent.mkdir(parents=True)
    place.symlink_to(scene.victim / "clone", target_is_directory=True)
    before = snapshot(scene.victim)

    with pytest.raises(StorageError, match="is a symbolic link"):
        await DulwichVCS(CloneSettings(checkout=True, keep_in=scene.keep)).clone(url)

    assert snapshot(scene.victim) == before  # not fetched into, not reset
    assert staging_left(scene.keep) == []


async def test_a_path_swapped_for_a_symlink_during_the_clone_is_not_followed(
    scene: Scene,
) -> None:
    team = scene.host / "org" / "team"

    def swap() -> None:
        # After the staging directory was made, before the worker uses it: the parent
        # becomes a link to a directory that holds a directory of the same name.
        (staging,) = [p.name for p in team.iterdir() if p.name.startswith(".clonegate-")]
        team.rename(team.with_name("team.moved"))
        team.symlink_to(scene.victim, target_is_directory=True)
        (scene.victim / staging).mkdir()

    with pytest.raises(StorageError, match="is a symbolic link"):
        await DulwichVCS(CloneSettings(checkout=True, keep_in=scene.keep)).clone(
            scene.daemon.url("org/team/repo"), on_ready=swap
        )

    # Only the directory planted there, still empty.
    assert list(snapshot(scene.victim).values()) == ["dir"]


def test_a_repository_nested_in_a_kept_clone_cannot_follow_its_symlink(scene: Scene) -> None:
    # nest/a commits b -> the victim; nest/a/b/c's kept path runs through it.
    work = scene.served / "nest" / "a.work"
    work.mkdir(parents=True)
    (work / "b").symlink_to(scene.victim)
    (work / "readme").write_text("a\n")
    git("init", "-q", "-b", "main", str(work))
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "a", cwd=work)
    git("clone", "-q", "--bare", str(work), str(scene.served / "nest" / "a.git"))
    make_repo(scene.served / "nest" / "a" / "b", "c")

    first = clonegate_analyze(scene.keep, scene.daemon.url("nest/a"))
    assert first.returncode == 0, first.stderr
    assert (scene.host / "nest" / "a" / "b").is_symlink()  # the repository's own file

    second = clonegate_analyze(scene.keep, scene.daemon.url("nest/a/b/c"))
    assert second.returncode == 1, second.stderr
    report = json.loads(second.stdout)
    assert report["error"]["kind"] == "storage"
    assert report["error"]["message"].endswith(
        f"{scene.host / 'nest' / 'a'} is another kept clone's working tree: "
        "a clone is never kept inside another"
    )
    assert report["path"] is None
    assert snapshot(scene.victim) == {}
    assert staging_left(scene.keep) == []


def one_file_tree(bare: Path, path: str) -> None:
    """A repository whose one commit holds one file at ``path`` (git fast-import
    accepts what git's own commands would not make)."""
    git("init", "-q", "--bare", "-b", "main", str(bare))
    fast_import(
        bare,
        b"blob\nmark :1\ndata 2\nx\n"
        b"commit refs/heads/main\ncommitter t <t@t> 1700000000 +0000\ndata 2\nc\n"
        + f"M 100644 :1 {path}\n\n".encode(),
    )


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        ("/".join(["d"] * 5000) + "/f", InvalidRepositoryError, "nested too deeply to check out"),
        ("n" * 4000, StorageError, "cannot write the clone's files: File name too long"),
    ],
    ids=["5000-deep", "4000-byte-name"],
)
async def test_a_tree_the_checkout_cannot_write_gets_its_real_kind(
    scene: Scene, path: str, error: type[Exception], message: str
) -> None:
    one_file_tree(scene.served / "hostile.git", path)
    with pytest.raises(error) as failed:
        await DulwichVCS(CloneSettings(checkout=True, keep_in=scene.keep)).clone(
            scene.daemon.url("hostile")
        )
    assert str(failed.value).endswith(message)
    assert "\n" not in str(failed.value)
    assert not (scene.host / "hostile").exists()
    assert staging_left(scene.keep) == []


class _Limits:
    connect_timeout = read_timeout = 1.0
    max_memory = max_file_size = 1 << 30


@pytest.mark.parametrize(
    ("raised", "kind", "reason"),
    [
        (RecursionError("maximum recursion depth exceeded"), ErrorKind.INVALID_REPOSITORY, "deep"),
        (OSError(errno.ENAMETOOLONG, "File name too long", "n" * 4000), ErrorKind.STORAGE, "long"),
    ],
)
def test_outside_the_checkout_too_the_kinds_are_the_real_ones(
    raised: Exception, kind: ErrorKind, reason: str
) -> None:
    # A branch name too long to write as a ref, a walk of nested trees: not the network.
    found, message = classify(raised, _Limits(), has_credentials=False, mid_transfer=True)
    assert found == kind
    assert reason in message
    assert "n" * 50 not in message
