"""The listing reads a tree's entries from its raw content, without dulwich's ``Tree``
object (issue 47): the same entries, in the same order, and the same refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from dulwich.errors import ObjectFormatException
from dulwich.objects import Blob, Tree
from hypothesis import example, given
from hypothesis import strategies as st

from clonegate._adapters.analysis.frameworks import pytest as pytest_rules
from clonegate._adapters.analysis.scan import _tree_entries, list_commit

from .support.repos import make_repo

# A directory, a file, an executable, a symlink, a submodule.
_MODES = (0o040000, 0o100644, 0o100755, 0o120000, 0o160000)
_entries = st.lists(
    st.tuples(
        st.binary(min_size=1, max_size=4).filter(lambda n: b"\0" not in n and b" " not in n),
        st.sampled_from(_MODES),
        st.binary(min_size=20, max_size=20),
    ),
    max_size=12,
)


def _raw(entries: list[tuple[bytes, int, bytes]]) -> bytes:
    """A tree as written, in the given order: git writes them sorted, a hostile
    repository need not, and may repeat a name."""
    return b"".join(b"%o %s\0%s" % (mode, name, sha) for name, mode, sha in entries)


@given(_entries)
# A directory sorts as if its name ended in "/": after "a.b", before "a0".
@example([(b"a0", 0o100644, b"1" * 20), (b"a", 0o040000, b"2" * 20), (b"a.b", 0o100644, b"3" * 20)])
@example([(b"x", 0o100644, b"1" * 20), (b"x", 0o040000, b"2" * 20)])  # the last one counts
def test_entries_are_dulwich_trees_in_git_order(entries: list[tuple[bytes, int, bytes]]) -> None:
    raw = _raw(entries)
    tree = Tree.from_raw_string(Tree.type_num, raw)
    assert isinstance(tree, Tree)
    expected = [(e.path, (e.mode, e.sha)) for e in tree.iteritems()]
    assert _tree_entries(Tree.type_num, raw) == expected


def test_another_object_or_a_broken_tree_is_refused_as_before() -> None:
    with pytest.raises(TypeError, match=r"^Blob where a tree should be$"):
        _tree_entries(Blob.type_num, b"hello")
    broken = b"100644 name-without-its-sha"
    with pytest.raises(ObjectFormatException):
        Tree.from_raw_string(Tree.type_num, broken)
    with pytest.raises(ObjectFormatException):
        _tree_entries(Tree.type_num, broken)


def test_pytest_looks_at_a_files_directories_only_when_its_name_is_a_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Most files of a tree are no test, and their names say so: the listing of the
    # issue's mid-size shape spent a fifth of its time on their directories (issue 47).
    files = {f"src/part{i}/util_{i}.py": b"x = 1\n" for i in range(30)}
    files["tests/unit/test_a.py"] = b"def test_a():\n    pass\n"
    repo = make_repo(tmp_path, "r", commits=1, files=files)
    asked: list[str] = []
    skipped = pytest_rules._skipped

    def counting(skip_dirs: tuple[str, ...], directory: str) -> bool:
        asked.append(directory)
        return skipped(skip_dirs, directory)

    monkeypatch.setattr(pytest_rules, "_skipped", counting)
    listing = list_commit(str(tmp_path / "r.git"), repo.head)
    assert [path for path, _ in listing.candidates] == ["tests/unit/test_a.py"]
    assert set(asked) == {"tests/unit"}
