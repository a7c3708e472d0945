"""Every Python block of the README runs, as a script, against a git server on 127.0.0.1."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .support.repos import make_repo
from .support.servers import GitDaemon, git_daemon

README = Path(__file__).parents[1] / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks() -> list[tuple[str, str]]:
    """(the heading the block is under, its code), in README order."""
    text = README.read_text()
    blocks = []
    for match in _BLOCK.finditer(text):
        headings = re.findall(r"^#+ (.*)$", text[: match.start()], re.MULTILINE)
        blocks.append((headings[-1], match.group(1)))
    return blocks


# What each example prints when its URL is the served repository below. Every block
# needs an entry: a new example cannot go untested.
EXPECTED = {
    "`open_analyzer`": "{url} ok 2 tests",
    "`WeightedSemaphore`": "size=1024",
    "`DulwichVCS`": "{url} main ",
    "`TestInventoryAnalyzer`": "tests/test_calc.py pytest 2",
    "`open_store`": "{url} ok reused=True",
    "`listing_feed`": "{url} ok \n",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("readme-served")
    test_file = b"def test_add():\n    assert 1 + 1 == 2\n\n\ndef test_sub():\n    pass\n"
    make_repo(root, "calc", files={"tests/test_calc.py": test_file})
    daemon: GitDaemon
    with git_daemon(root) as daemon:
        yield daemon.url("calc")


def run_as_script(code: str, where: Path, *urls: str) -> subprocess.CompletedProcess[str]:
    """``code`` saved as ``where/example.py`` and run with ``urls``, as a user would."""
    script = where / "example.py"
    script.write_text(code)
    return subprocess.run(
        [sys.executable, str(script), *urls],
        cwd=where,
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(where)},
        timeout=120,
        check=False,
    )


def test_every_block_has_an_expectation() -> None:
    headings = [heading.split(":")[0] for heading, _ in python_blocks()]
    assert sorted(headings) == sorted(EXPECTED)


@pytest.mark.parametrize(("heading", "code"), python_blocks(), ids=lambda v: v[:40])
def test_the_readme_example_runs_as_written(
    heading: str, code: str, served: str, tmp_path: Path
) -> None:
    result = run_as_script(code, tmp_path, served)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert EXPECTED[heading.split(":")[0]].format(url=served) in result.stdout
    # No clone left behind; the store example keeps its database, as it should.
    left = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("results.db"))
    assert left == ["example.py"]


def test_an_unguarded_script_runs_once(served: str, tmp_path: Path) -> None:
    """The use case example has no main guard: worker processes never import it, so its
    top level runs once, in its own process: one report per URL, one summary."""
    (code,) = [code for heading, code in python_blocks() if heading.startswith("`open_analyzer`")]
    assert "__main__" not in code
    missing = served.rsplit("/", 1)[0] + "/missing.git"
    result = run_as_script(code, tmp_path, served, missing)
    assert result.returncode == 0
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert len(lines) == 3  # two reports, one summary
    assert sorted(line.split()[0] for line in lines[:2]) == sorted([served, missing])
    assert lines[2].startswith("BatchSummary(")


@pytest.mark.parametrize("forge", ["github", "gitlab", "gitea", "bitbucket"])
def test_the_listing_example_lists_each_forge_then_clones_and_analyzes(
    tmp_path: Path, forge: str
) -> None:
    """The `listing_feed` block with a source of each forge, against its loopback API
    whose repositories a git daemon serves (issue 45): the whole path as a user runs it."""
    from .support.forges.bitbucket import BitbucketApi
    from .support.forges.catalogue import made
    from .support.forges.core import ForgeServer
    from .support.forges.gitea import GiteaApi
    from .support.forges.github import GitHubApi
    from .support.forges.gitlab import GitLabApi
    from .support.forges.threaded import in_a_thread

    (code,) = [code for heading, code in python_blocks() if heading.startswith("`listing_feed`")]
    root = tmp_path / "served"
    repos = made("acme", 6)
    for repo in repos:
        make_repo(root / "acme", repo.name, files={"tests/test_a.py": b"def test_a(): pass\n"})
    with git_daemon(root) as daemon:
        git_base = f"git://127.0.0.1:{daemon.port}"
        apis: dict[str, tuple[ForgeServer, str]] = {
            "github": (
                GitHubApi(repos, git_base=git_base, orgs=["acme"], prefix="/api/v3"),
                "github:org/acme",
            ),
            "gitlab": (GitLabApi(repos, git_base=git_base), "gitlab:group/acme"),
            "gitea": (GiteaApi(repos, git_base=git_base, orgs=["acme"]), "gitea:org/acme"),
            "bitbucket": (BitbucketApi(repos, git_base=git_base), "bitbucket:workspace/acme"),
        }
        api, source = apis[forge]
        with in_a_thread(api):
            work = tmp_path / "work"
            work.mkdir()
            result = run_as_script(code, work, f"{source}@{api.base_url}")
    assert result.returncode == 0, result.stderr
    lines = sorted(result.stdout.splitlines())
    kept = [repo for repo in repos if not repo.fork]
    said = forge != "bitbucket"  # Bitbucket's listing says no star count: None
    assert lines == sorted(
        f"{repo.clone_url(git_base)} ok {repo.full_name} stars={repo.stars if said else None}"
        for repo in kept
    )


def listing_commands() -> list[str]:
    """The ``clonegate`` lines of the shell block under "Where lists come from"."""
    text = README.read_text()
    section = text[text.index("### Where lists come from") :]
    block = section[section.index("```sh\n") + 6 : section.index("\n```", section.index("```sh"))]
    return [line for line in block.splitlines() if line.startswith("clonegate ")]


@pytest.mark.parametrize("command", listing_commands())
def test_each_listing_example_is_understood_as_written(command: str, tmp_path: Path) -> None:
    """The examples name real forges, which these machines cannot reach: run as written
    in a network namespace of their own (no network at all), each is taken as a valid
    command (never a usage error, exit 2) and fails only where it reaches the network,
    with one line naming what it could not reach (exit 1)."""
    import shlex
    import shutil

    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "--net", "true"], check=False).returncode:
        pytest.skip("no network namespace can be made here (unshare --net)")
    (tmp_path / "sources.txt").write_text("github:user/octocat\n")
    argv = [unshare, "--net", sys.executable, "-m", "clonegate", *shlex.split(command)[1:]]
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "GITLAB_TOKEN", "GITEA_TOKEN"):
        env.pop(name, None)
    done = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "clonegate: error:" in done.stderr or '"status": "failed"' in done.stdout
