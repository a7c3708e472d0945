"""The scan learns a blob's size from the pack before inflating it (issue 14's envelope)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from dulwich.pack import Pack
from dulwich.repo import Repo

from clonegate._adapters.analysis.blobs import BlobTooLarge, blob_reader

from .support.repos import GIT_ENV, git


def _sha(bare: Path, spec: str) -> str:
    return git("rev-parse", spec, cwd=bare)


def test_a_blob_over_the_limit_is_refused_without_inflating_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    git("init", "-q", "-b", "main", str(work))
    big = b"".join(b"line %d of a big generated file\n" % i for i in range(60_000))
    for version, content in enumerate((big, big.replace(b"line 7 ", b"LINE 7 "))):
        (work / "big.txt").write_bytes(content)
        (work / "small.txt").write_bytes(b"small %d\n" % version)
        git("add", "-A", cwd=work)
        git("commit", "-q", "-m", f"v{version}", cwd=work, env=GIT_ENV)
    bare = tmp_path / "bare.git"
    git("clone", "-q", "--bare", str(work), str(bare))
    git("repack", "-a", "-d", "-f", "--window=10", cwd=bare)
    old, new = _sha(bare, "HEAD~1:big.txt"), _sha(bare, "HEAD:big.txt")
    # One of the two is stored as a delta of the other: both header kinds are read.
    packs = list((bare / "objects" / "pack").glob("*.idx"))
    listing = subprocess.run(
        ["git", "verify-pack", "-v", str(packs[0])], capture_output=True, text=True, check=True
    ).stdout
    kinds = {
        line.split()[0]: len(line.split()) for line in listing.splitlines() if line[:1].isalnum()
    }
    assert sorted((kinds[old], kinds[new])) == [5, 7]  # 7 columns: a delta (depth, base)

    inflated: list[bytes] = []
    real_get_raw = Pack.get_raw

    def counting_get_raw(self: Pack, sha: bytes) -> tuple[int, bytes]:
        inflated.append(sha)
        return real_get_raw(self, sha)  # type: ignore[arg-type]

    monkeypatch.setattr(Pack, "get_raw", counting_get_raw)
    with Repo(str(bare)) as repo:
        read = blob_reader(repo.object_store, len(big) - 1)
        for sha, size in ((old, len(big)), (new, len(big))):
            with pytest.raises(BlobTooLarge) as caught:
                read(sha.encode())
            assert caught.value.size == size
        assert inflated == []  # refused from the header alone
        assert read(_sha(bare, "HEAD:small.txt").encode()) == b"small 1\n"
        assert len(inflated) == 1
        with pytest.raises(ValueError, match="is not a blob"):
            read(_sha(bare, "HEAD^{tree}").encode())
