"""The documents say what the code and the benchmarks say.

README.md's ADR table, its benchmark figures, the options and library names it uses,
the defaults it quotes and its lists of exit statuses are checked against the ADR
files, bench/README.md's current figures, the command line and the library, both
ways where both can drift, so that none of them can drift again (issue 42). The ADRs'
headers and bench/README.md's shape (current figures, one History table) too.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest
import typer

import clonegate
from clonegate_cli.app import _EXIT_CODES, app

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
BENCH_README = ROOT / "bench" / "README.md"
ADRS = ROOT / "ADR"

# Options the README names that belong to other programs, each with where it is.
FOREIGN_OPTIONS = {
    "--locked": "uv run --locked",
    "--compile-bytecode": "uv sync --locked --compile-bytecode",
    "--dist": "pytest -n 2 --dist worksteal (pytest-xdist)",
    "--strict": "mypy --strict",
    "--single-branch": "git clone --depth 1 --single-branch",
    "--bare": "git clone --bare",
    "--test": "node --test",
    "--pattern": "RSpec's .rspec",
    "--exclude-pattern": "RSpec's .rspec",
    "--default-path": "RSpec's .rspec",
    "--port": "redis-server --port",
    "--save": "redis-server --save",
    "--maxmemory-policy": "redis-server --maxmemory-policy",
    "--daemonize": "redis-server --daemonize",
}
# Click's and Typer's own: every command's --help, and the completion options (which
# Typer adds to the root command only when completion is installed).
TYPER_OPTIONS = {"--help", "--install-completion", "--show-completion"}
# Every list of exit statuses names these (ADR 0007).
EXIT_STATUSES = ("0", "1", "2", "4", "129", "130", "141", "143")


def section(text: str, heading: str) -> str:
    """The text under ``heading`` (a whole heading line) up to the next heading of the
    same level or higher."""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(heading + "\n")
    following = re.compile(rf"^#{{1,{level}}} ", re.MULTILINE)
    found = following.search(text, start + len(heading) + 1)
    return text[start : found.start() if found else len(text)]


def table_rows(text: str) -> list[list[str]]:
    """The cells of every body row of every Markdown table in ``text``."""
    rows = []
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if not line.startswith("|") or re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line):
            continue
        if number + 1 < len(lines) and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[number + 1]):
            continue  # a header row
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def numbers(cell: str) -> list[str]:
    """The figures in a cell, as written (``4,814``, ``0.177``, ``2``)."""
    return re.findall(r"\d[\d,]*(?:\.\d+)?", cell)


def contains_figure(text: str, figure: str) -> bool:
    """``figure`` stands alone in ``text``: not part of a longer number."""
    return re.search(rf"(?<![\d.,]){re.escape(figure)}(?![\d]|[.,]\d)", text) is not None


# --- the ADR table -----------------------------------------------------------------


def readme_adr_rows() -> dict[str, str]:
    """ADR number -> the file its row links to, from README's "Design decisions"."""
    table = section(README.read_text(), "## Design decisions")
    rows = {}
    for cells in table_rows(table):
        link = re.fullmatch(r"\[(\d{4})\]\((ADR/[^)]+)\)", cells[0])
        assert link, f"a row of the ADR table without a link: {cells[0]!r}"
        rows[link.group(1)] = link.group(2)
    return rows


def test_every_adr_is_in_the_readme_table_and_every_row_is_an_adr() -> None:
    files = {path.name[:4]: f"ADR/{path.name}" for path in ADRS.glob("[0-9][0-9][0-9][0-9]-*.md")}
    assert readme_adr_rows() == files


@pytest.mark.parametrize("path", sorted(ADRS.glob("[0-9]*.md")), ids=lambda p: p.name[:4])
def test_every_adr_opens_with_status_date_and_supersedes(path: Path) -> None:
    lines = path.read_text().splitlines()
    assert lines[0].startswith(f"# ADR {path.name[:4]}: ")
    header = "\n".join(lines[1 : next(i for i, line in enumerate(lines) if line.startswith("## "))])
    assert re.fullmatch(
        r"\n- Status: accepted[^\n]*(\n  [^\n]+)*"
        r"\n- Date: \d{4}-\d{2}-\d{2}"
        r"\n- Supersedes: [^\n]+(\n  [^\n]+)*\n",
        header,
    ), header


def test_adr_0001_names_modules_that_exist() -> None:
    text = next(ADRS.glob("0001-*.md")).read_text()
    paths = set(re.findall(r"`((?:clonegate|cli)/[\w/.]+)`", text))
    assert paths, "ADR 0001 names the layers' modules"
    assert [path for path in paths if not (ROOT / path).exists()] == []
    script = re.search(r'^clonegate = "([\w.:]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert script is not None
    assert f'`clonegate = "{script.group(1)}"`' in text


# --- benchmark figures ----------------------------------------------------------------


def current_bench_figures() -> str:
    """bench/README.md without its History table: what the README may quote."""
    text = BENCH_README.read_text()
    if "\n## History\n" not in text:
        return text
    return text.replace(section(text, "## History"), "")


def readme_benchmark_results() -> list[tuple[str, str]]:
    """(row label, result cell) of every table in README's Benchmarks section."""
    tables = section(README.read_text(), "## Benchmarks")
    return [(cells[0], cells[1]) for cells in table_rows(tables)]


def test_the_readme_quotes_benchmark_figures() -> None:
    assert len(readme_benchmark_results()) >= 20


@pytest.mark.parametrize(("row", "result"), readme_benchmark_results(), ids=lambda v: v[:40])
def test_every_benchmark_figure_in_the_readme_is_a_current_one(row: str, result: str) -> None:
    current = current_bench_figures()
    missing = [figure for figure in numbers(result) if not contains_figure(current, figure)]
    assert missing == [], f"README's {row!r} quotes {missing}, not in bench/README.md"


def test_bench_readme_has_one_history_table_and_no_dated_log() -> None:
    text = BENCH_README.read_text()
    assert re.findall(r"^#+ .*\b(?:Session \d+|first pass|second pass)", text, re.M) == []
    history = section(text, "## History")
    assert len(table_rows(history)) >= 10


# --- the library section -----------------------------------------------------------


def readme_library_names() -> set[str]:
    """The options and openers the README names, and the types it names as
    ``clonegate.X``."""
    text = README.read_text()
    named = set(re.findall(r"(?<![\w.])((?:with|open)_[a-z_]+)\b", text))
    return named | set(re.findall(r"\bclonegate\.([A-Z]\w*)", text))


def public_names() -> set[str]:
    """What ``clonegate`` and its public submodules (``clonegate.store``, ...) export."""
    names = set(clonegate.__all__)
    for module in pkgutil.iter_modules(clonegate.__path__):
        if not module.name.startswith("_"):
            names |= set(
                getattr(importlib.import_module(f"clonegate.{module.name}"), "__all__", ())
            )
    return names


def test_every_library_name_the_readme_uses_exists() -> None:
    assert readme_library_names() - public_names() == set()


def test_every_option_and_opener_of_the_library_is_in_the_readme() -> None:
    exported = {name for name in public_names() if name.startswith(("with_", "open_"))}
    assert exported - readme_library_names() == set()


def test_no_document_points_to_a_removed_session_of_bench_readme() -> None:
    places = [README, *ADRS.glob("*.md"), *(ROOT / "clonegate").rglob("*.py")]
    pointing = [
        path.name
        for path in places
        if re.search(r"bench/README(?:\.md)?,? session \d+", path.read_text(), re.IGNORECASE)
    ]
    assert pointing == []


def shown(value: object) -> str:
    """A default as the README writes it: 120.0 as 120, 2 GiB in bytes as "2 GiB", a
    flag on by default (``--adaptive``) as "on"."""
    if value is True:
        return "on"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and value >= 1 << 30 and value % (1 << 30) == 0:
        return f"{value >> 30} GiB"
    return str(value)


@pytest.mark.parametrize("settings", [clonegate.CloneSettings, clonegate.AnalysisSettings])
def test_the_readme_gives_each_settings_default(settings: type) -> None:
    """Where the README names a settings field followed by a figure, the figure is the
    field's default (``read_timeout`` 120 s)."""
    text = README.read_text()
    start = text.index(f"`{settings.__name__}` (")
    described = text[start : start + 600]  # the lines that list its fields
    checked = 0
    for field in dataclasses.fields(settings):
        quoted = re.search(rf"`{field.name}` (\d[\d.]*(?: GiB)?)", described)
        if quoted is not None and field.default is not dataclasses.MISSING:
            assert quoted.group(1) == shown(field.default), field.name
            checked += 1
    assert checked >= 1


# --- options and exit statuses ----------------------------------------------------------


def cli_option_parameters() -> list[Any]:
    """Every option of ``clonegate`` and of each of its commands, as ``--help`` shows
    them. Typer carries its own copy of Click, so parameters and groups are recognised
    by what they have, not by Click's classes."""
    found = []
    commands: list[Any] = [typer.main.get_command(app)]
    while commands:
        command = commands.pop()
        found += [p for p in command.params if p.param_type_name == "option" and not p.hidden]
        commands.extend(getattr(command, "commands", {}).values())
    return found


def cli_options() -> set[str]:
    """Every long option a ``--help`` shows."""
    names = {name for p in cli_option_parameters() for name in [*p.opts, *p.secondary_opts]}
    return {name for name in names if name.startswith("--")}


def test_every_option_the_readme_names_exists() -> None:
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", README.read_text()))
    unknown = named - cli_options() - FOREIGN_OPTIONS.keys() - TYPER_OPTIONS
    assert unknown == set(), "README names options no command has"


def test_every_option_of_every_command_is_in_the_readme() -> None:
    """The reverse: an option added to a command is documented where users read."""
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", README.read_text()))
    # A boolean flag's --no-X form is documented by its --X.
    documented = {option for option in cli_options() if not option.startswith("--no-")}
    assert documented - named - TYPER_OPTIONS == set()


def test_every_foreign_option_is_still_named() -> None:
    """A stale exception would let a wrong clonegate option through later."""
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", README.read_text()))
    assert FOREIGN_OPTIONS.keys() - named == set()
    assert FOREIGN_OPTIONS.keys() & cli_options() == set()


def analyze_defaults() -> dict[str, str]:
    """``analyze``'s options with a default, as its help shows them (900.0 as 900)."""
    command = typer.main.get_command(app).commands["analyze"]  # type: ignore[attr-defined]
    return {
        name: shown(parameter.default)
        for parameter in command.params
        if parameter.param_type_name == "option" and parameter.default not in (None, False)
        for name in parameter.opts
    }


def readme_option_rows() -> list[tuple[list[str], str]]:
    """(the options, the meaning) of each row of README's table of ``analyze``'s options."""
    table = section(README.read_text(), "## Command line").split("\n\n| option |")[1]
    table = "| option |" + table.split("\n\n")[0]
    return [(re.findall(r"`(-[-\w]+)", cells[0]), cells[1]) for cells in table_rows(table)]


@pytest.mark.parametrize(("options", "meaning"), readme_option_rows(), ids=lambda v: str(v)[:30])
def test_the_readme_gives_each_option_its_default(options: list[str], meaning: str) -> None:
    defaults = analyze_defaults()
    for option in options:
        if option in defaults:
            assert contains_figure(meaning, defaults[option]), (option, defaults[option])


def all_defaults() -> dict[str, set[str]]:
    """Each long option's defaults over every command, as help shows them."""
    defaults: dict[str, set[str]] = {}
    for parameter in cli_option_parameters():
        if parameter.default not in (None, False):
            for name in parameter.opts:
                defaults.setdefault(name, set()).add(shown(parameter.default))
    return defaults


def test_every_default_the_readme_prose_gives_is_the_options_own() -> None:
    """``--claim-idle`` seconds (default 60), ``--cache-size`` (default 256M), ..."""
    defaults = all_defaults()
    quoted = re.findall(r"`(--[a-z-]+)[^`]*`[^`(|]{0,40}\(default `?([\w.]+)", README.read_text())
    assert len(quoted) >= 4
    wrong = [(option, value) for option, value in quoted if value not in defaults[option]]
    assert wrong == []


def exit_lists() -> dict[str, str]:
    adr = next(ADRS.glob("0007-*.md")).read_text()
    readme = README.read_text()
    return {
        "README": readme[readme.index("Exit status: ") :].split("\n\n")[0],
        "ADR 0007": adr[adr.index("**Exit codes:**") :].split("\n- ")[0],
        "analyze --help": _EXIT_CODES,
    }


@pytest.mark.parametrize(("where", "text"), exit_lists().items())
def test_every_list_of_exit_statuses_names_each_one(where: str, text: str) -> None:
    statuses = set(re.findall(r"(?<![\d.-])\d+(?![\d.])", text))
    assert set(EXIT_STATUSES) - statuses == set(), where
