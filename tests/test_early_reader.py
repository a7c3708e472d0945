"""The raw command line's reader (``clonegate_cli._early``): a first clone starts early
only for a plain ``analyze`` of URLs it fully understands (ADR 0003, issue 47)."""

from __future__ import annotations

import pytest

from clonegate_cli._early import first_clone as read_first_clone
from clonegate_cli._early import plain_analyze

URL = "git://127.0.0.1:9/r.git"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["analyze", URL], (URL, None)),
        (["analyze", "--format", "json", URL, "https://h/o/r"], (URL, None)),
        (["analyze", "-q", "--format=jsonl", "-j", "3", URL], (URL, None)),
        (["analyze", URL, "--depth", "0", "-v"], (URL, 0)),
        (
            ["analyze", "--depth=5", "--max-concurrent-clones=2", "http://h:8080/a%20b"],
            (
                "http://h:8080/a%20b",
                5,
            ),
        ),
    ],
)
def test_the_reader_takes_a_plain_analyze_of_urls(
    arguments: list[str], expected: tuple[str, int | None]
) -> None:
    assert read_first_clone(arguments, {"HOME": "/h", "TMPDIR": "/t"}) == expected


@pytest.mark.parametrize(
    "arguments",
    [
        ["analyze"],
        ["analyze", "--format", "json"],
        ["worker", URL],
        ["analyze", "--help", URL],
        ["analyze", "--", URL],
        ["analyze", "-qv", URL],  # click reads it; this reader does not
        ["analyze", "-q", "-v", URL],  # Typer refuses them together, and says why
        ["analyze", "-j", "0", URL],  # likewise
        ["analyze", "-j4", URL],
        ["analyze", "-j", "x", URL],
        ["analyze", "-j", URL],
        ["analyze", "--depth", "-1", URL],
        ["analyze", "--depth", "٣", URL],  # a digit to str.isdigit, not to this reader
        ["analyze", "--format", "yaml", URL],
        ["analyze", "--keep", "/k", URL],  # where the clone goes
        ["analyze", "--token", "t", "--token-host", "h", URL],  # a credential
        ["analyze", "--netrc", "/n", URL],
        ["analyze", "--memory-budget", "1G", URL],  # the clone asks for memory
        ["analyze", "--ssh-command", "ssh -i k", URL],
        ["analyze", "--max-repo-size", "1G", URL],
        ["analyze", "--db", "s.db", URL],
        ["analyze", "--from-file", "-", URL],
        ["analyze", "https://user:secret@h/o/r"],  # user-info: a credential
        ["analyze", "https://user@h/o/r"],
        ["analyze", "ssh://h/o/r"],  # ssh's keys and agent are credentials
        ["analyze", "git@h:o/r"],
        ["analyze", "o/r"],  # a shorthand
        ["analyze", "github:org/x"],  # a source
        ["analyze", "file:///tmp/r"],
        ["analyze", "git://"],
        ["analyze", "git://h/r?x=1"],
        ["analyze", "git://h/r\x1b[31m"],
        ["analyze", "git://h/r.git\n"],
        ["analyze", URL, "github:org/x"],  # every argument understood, or none
    ],
)
def test_the_reader_starts_nothing_on_any_doubt(arguments: list[str]) -> None:
    assert read_first_clone(arguments, {}) is None


@pytest.mark.parametrize("variable", ["CLONEGATE_TOKEN", "CLONEGATE_MEMORY_BUDGET", "CLONEGATE_"])
def test_the_reader_starts_nothing_when_a_clonegate_variable_is_set(variable: str) -> None:
    # Each stands for an option: a token, a netrc, an ssh command, a budget, a store.
    assert read_first_clone(["analyze", URL], {variable: ""}) is None


def test_a_plain_analyze_is_read_whole_the_last_of_a_repeated_option_winning() -> None:
    arguments = ["analyze", "-j", "3", URL, "--format=table", "-q", "--format", "json"]
    plain = plain_analyze([*arguments, "--max-concurrent-clones=5", "https://h/o/r"], {})
    assert plain is not None
    assert (plain.urls, plain.jobs, plain.depth) == ([URL, "https://h/o/r"], 5, None)
    assert (plain.output_format, plain.quiet, plain.verbose) == ("json", True, False)
