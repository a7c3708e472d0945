"""A later run over a keep directory, against what earlier runs kept and repositories
that changed in hostile ways since (issue 38, ADR 0011): nothing written through a
link nor inside another kept clone, and a config the next run can read."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

import pytest

from clonegate import CloneSettings, DulwichVCS
from clonegate.errors import InvalidRepositoryError, StorageError, TooLargeError

from .support.keep_scene import snapshot
from .support.repos import GIT_ENV, fast_import, git, make_repo
from .support.servers import git_daemon


def put(bare: Path, kind: str, data: bytes) -> str:
    """Write one object as given, checked by nothing (git's commands would refuse
    some of what a hostile repository holds)."""
    return (
        subprocess.run(
            ["git", "-C", str(bare), "hash-object", "-t", kind, "--literally", "-w", "--stdin"],
            input=data,
            capture_output=True,
            check=True,
            env={**os.environ, **GIT_ENV},
        )
        .stdout.decode()
        .strip()
    )


def tree(bare: Path, *entries: tuple[str, str, str]) -> str:
    """A tree of ``(mode, name, sha)`` entries, in the order given, duplicates kept."""
    raw = b"".join(
        f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha) for mode, name, sha in entries
    )
    return put(bare, "tree", raw)


def commit(bare: Path, tree_sha: str, parent: str | None = None) -> str:
    parents = f"parent {parent}\n" if parent else ""
    who = "t <t@t> 1700000000 +0000"
    sha = put(
        bare, "commit", f"tree {tree_sha}\n{parents}author {who}\ncommitter {who}\n\nc\n".encode()
    )
    git("-C", str(bare), "update-ref", "refs/heads/main", sha)
    return sha


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("link", "directory"),
        ("link", "link-then-directory"),
        ("link", "directory-then-link"),
        ("directory", "link-then-directory"),
        ("directory", "directory-then-link"),
        ("directory", "aborted-then-directory"),
    ],
)
async def test_a_link_a_kept_clone_committed_is_not_written_through_by_its_update(
    tmp_path: Path, first: str, then: str
) -> None:
    # Run 1 checks out d (a link to the victim, or a directory); by run 2 the
    # repository holds d/y, with a duplicate d, the link, beside it for the hostile
    # variants (git's own commands would not write such a tree; a server serves it).
    served, victim = tmp_path / "served", tmp_path / "victim"
    victim.mkdir()
    bare = served / "r.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    link = ("120000", "d", put(bare, "blob", str(victim).encode()))
    before = ("40000", "d", tree(bare, ("100644", "x", put(bare, "blob", b"x\n"))))
    start = commit(bare, tree(bare, link if first == "link" else before))
    with git_daemon(served) as daemon:
        vcs = DulwichVCS(CloneSettings(checkout=True, keep_in=tmp_path / "keep"))
        kept = await vcs.clone(daemon.url("r"))
        assert (kept.path / "d").is_symlink() == (first == "link")
        directory = ("40000", "d", tree(bare, ("100644", "y", put(bare, "blob", b"evil\n"))))
        if then == "aborted-then-directory":
            # An update stopped by a path git refuses, after it made the link: the
            # files on disk are no longer what the index says.
            dot_git = ("40000", ".git", tree(bare, ("100644", "x", put(bare, "blob", b"x\n"))))
            start = commit(bare, tree(bare, link, ("40000", "z", tree(bare, dot_git))), start)
            with pytest.raises(InvalidRepositoryError):
                await vcs.clone(daemon.url("r"))
            assert (kept.path / "d").is_symlink()
        entries = {
            "directory": [directory],
            "link-then-directory": [link, directory],
            "directory-then-link": [directory, link],
            "aborted-then-directory": [directory],
        }[then]
        commit(bare, tree(bare, *entries), start)
        with contextlib.suppress(InvalidRepositoryError):  # refusing the tree is as good
            await vcs.clone(daemon.url("r"))
    assert snapshot(victim) == {}


@pytest.mark.parametrize("branch", ['x"#y', "x;y"])
async def test_a_branch_name_dulwich_cannot_read_back_is_kept_and_updated(
    tmp_path: Path, branch: str
) -> None:
    # Valid names for git; dulwich 1.2 writes a config it then cannot read ("#"), or
    # reads cut short (";").
    served = tmp_path / "served"
    repo = make_repo(served, "r", branch=branch, other_branches=())
    with git_daemon(served) as daemon:
        vcs = DulwichVCS(CloneSettings(checkout=True, keep_in=tmp_path / "keep"))
        kept = await vcs.clone(daemon.url("r"))
        again = await vcs.clone(daemon.url("r"))

    assert (kept.branch, again.branch, again.commit) == (branch, branch, repo.head)
    assert (again.path / "file2.txt").is_file()
    # What git reads there, if anything, is what was meant: not a refspec cut short.
    fetch = git("-C", str(again.path), "config", "--default", "", "remote.origin.fetch")
    assert fetch in ("", f"+refs/heads/{branch}:refs/remotes/origin/{branch}")


async def test_a_kept_clone_whose_config_cannot_be_read_is_a_storage_error(
    tmp_path: Path,
) -> None:
    served = tmp_path / "served"
    make_repo(served, "r", other_branches=())
    with git_daemon(served) as daemon:
        vcs = DulwichVCS(CloneSettings(checkout=True, keep_in=tmp_path / "keep"))
        kept = await vcs.clone(daemon.url("r"))
        config = kept.path / ".git" / "config"
        config.write_text(config.read_text() + '[branch "x\\"#"]\n\tremote = origin\n')
        with pytest.raises(StorageError, match="is not a git clone that can be read"):
            await vcs.clone(daemon.url("r"))  # not the server's fault: not "protocol"


async def test_no_clone_is_kept_inside_a_bare_kept_clone(tmp_path: Path) -> None:
    # nest/a kept bare; nest/a/refs/heads/x would put a clone, and the files its
    # repository chose, among nest/a's refs (or hooks), which git reads.
    served = tmp_path / "served"
    make_repo(served, "nest/a", other_branches=())
    make_repo(served, "nest/a/refs/heads/x", other_branches=())
    keep = tmp_path / "keep"
    with git_daemon(served) as daemon:
        bare = await DulwichVCS(CloneSettings(keep_in=keep)).clone(daemon.url("nest/a"))
        refs = git("-C", str(bare.path), "for-each-ref")
        with pytest.raises(StorageError, match="is another kept clone's bare repository"):
            await DulwichVCS(CloneSettings(checkout=True, keep_in=keep)).clone(
                daemon.url("nest/a/refs/heads/x")
            )

    assert not (bare.path / "refs" / "heads" / "x").exists()
    assert git("-C", str(bare.path), "for-each-ref") == refs


@pytest.mark.parametrize("keep_is", ["a dangling link", "a file"])
async def test_a_keep_directory_that_cannot_be_one_is_named_in_the_error(
    tmp_path: Path, keep_is: str
) -> None:
    served, keep = tmp_path / "served", tmp_path / "keep"
    make_repo(served, "org/r", other_branches=())
    if keep_is == "a file":
        keep.write_text("not a directory\n")
    else:
        keep.symlink_to(tmp_path / "nowhere")
    with git_daemon(served) as daemon, pytest.raises(StorageError) as refused:
        await DulwichVCS(CloneSettings(checkout=True, keep_in=keep)).clone(daemon.url("org/r"))
    assert refused.value.reason == f"the keep directory {keep} cannot be used: File exists"


@pytest.mark.parametrize(("before", "after"), [("a", "a/b"), ("a/b", "a")])
async def test_a_head_branch_renamed_over_the_recorded_one_still_updates(
    tmp_path: Path, before: str, after: str
) -> None:
    # The recorded branch's ref file stands where the new one's directory must go (or
    # the reverse): the update is the repository's, not a transport failure.
    served = tmp_path / "served"
    make_repo(served, "r", branch=before, other_branches=())
    with git_daemon(served) as daemon:
        vcs = DulwichVCS(CloneSettings(checkout=True, keep_in=tmp_path / "keep"))
        kept = await vcs.clone(daemon.url("r"))
        git("-C", str(served / "r.git"), "branch", "-m", before, after)
        again = await vcs.clone(daemon.url("r"))

    assert (kept.branch, again.branch, again.path) == (before, after, kept.path)
    refs = git("-C", str(again.path), "for-each-ref", "--format=%(refname)").split()
    assert refs == [f"refs/heads/{after}", f"refs/remotes/origin/{after}"]
    assert git("-C", str(again.path), "symbolic-ref", "HEAD") == f"refs/heads/{after}"


def bomb(bare: Path, parent: str | None = None) -> str:
    """A commit whose one 1 MiB blob of zeros is at 40 paths: a pack of a few KB, a
    checkout of 40 MiB (each file under the file-size limit)."""
    blob = put(bare, "blob", b"\0" * (1 << 20))
    sha = commit(bare, tree(bare, *[("100644", f"f{i:02d}", blob) for i in range(40)]), parent)
    git("-C", str(bare), "repack", "-adq")
    return sha


@pytest.mark.parametrize("when", ["clone", "update"])
async def test_a_checkout_past_the_size_limit_is_refused_before_any_file_is_written(
    tmp_path: Path, when: str
) -> None:
    served = tmp_path / "served"
    bare = served / "r.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    first = commit(bare, tree(bare, ("100644", "readme", put(bare, "blob", b"small\n"))))
    keep = tmp_path / "keep"
    vcs = DulwichVCS(CloneSettings(checkout=True, keep_in=keep, max_repo_size=8 << 20))
    with git_daemon(served) as daemon:
        if when == "update":
            kept = await vcs.clone(daemon.url("r"))
        bomb(bare, first if when == "update" else None)
        with pytest.raises(TooLargeError) as refused:
            await vcs.clone(daemon.url("r"))

    assert str(refused.value).endswith(
        "the clone would take more than 8 MiB on disk once checked out (the limit)"
    )
    if when == "update":  # the old files, untouched
        assert sorted(p.name for p in kept.path.iterdir()) == [".git", "readme"]


async def test_a_relative_keep_directory_is_the_callers_at_each_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The workers keep the working directory their pool started in; the caller moved.
    served = tmp_path / "served"
    make_repo(served, "org/a", other_branches=())
    make_repo(served, "org/b", other_branches=())
    (tmp_path / "first").mkdir()
    (tmp_path / "then").mkdir()
    monkeypatch.chdir(tmp_path / "first")
    with git_daemon(served) as daemon:
        vcs = DulwichVCS(CloneSettings(checkout=True, keep_in=Path("keep")))
        await vcs.clone(daemon.url("org/a"))  # starts the pool here
        monkeypatch.chdir(tmp_path / "then")
        kept = await vcs.clone(daemon.url("org/b"))

    place = tmp_path / "then" / "keep" / f"127.0.0.1_{daemon.port}" / "org" / "b"
    assert kept.path == place
    assert (place / ".git").is_dir()


async def test_a_tree_of_many_empty_files_counts_against_the_size_limit(tmp_path: Path) -> None:
    # 20,000 paths to one empty blob: a 50 KB pack, no byte of file content, and an
    # index of 1.4 MB (and 20,000 inodes). Refused before the checkout, not after it.
    served = tmp_path / "served"
    bare = served / "r.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    paths = b"".join(b"M 100644 :1 d%d/f%d\n" % (i % 100, i) for i in range(20_000))
    fast_import(
        bare,
        b"blob\nmark :1\ndata 0\n\ncommit refs/heads/main\n"
        b"committer t <t@t> 1700000000 +0000\ndata 2\nc\n" + paths + b"\n",
    )
    vcs = DulwichVCS(
        CloneSettings(checkout=True, keep_in=tmp_path / "keep", max_repo_size=1_000_000)
    )
    with git_daemon(served) as daemon, pytest.raises(TooLargeError) as refused:
        await vcs.clone(daemon.url("r"))
    assert "would take more than 976.56 KiB on disk once checked out" in str(refused.value)
