"""Listed records and the filters applied to them (ADR 0023): each filter's exact
meaning, held against a reference written from the ADR's words, on random listings."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clonegate._adapters.analysis.patterns import compile_regex
from clonegate._domain.filters import MAX_PATTERN_CHARS, Filters
from clonegate._domain.listed import Listed

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def listed(name: str = "acme/tool", **fields: object) -> Listed:
    url = f"https://git.example/{name}.git"
    return Listed(name, url, str(abs(hash(name))), **fields)  # type: ignore[arg-type]


def kept(filters: Filters, records: list[Listed]) -> list[str]:
    selection = filters.selection(compile_regex)
    return [record.full_name for record in records if selection.offer(record) is None]


def test_each_filter_by_itself() -> None:
    fork = listed("a/fork", fork=True)
    archived = listed("a/old", archived=True)
    silent = listed("a/silent")  # says nothing of forks, archives, language, stars
    go = listed("a/go", language="Go", topics=("cli", "Web"), stars=10, pushed_at=T0)
    rust = listed("b/rust", language="Rust", topics=("cli",), stars=9, pushed_at=T0 - timedelta(1))
    records = [fork, archived, silent, go, rust]
    every = [r.full_name for r in records]
    assert kept(Filters(), records) == every
    assert kept(Filters(skip_forks=True), records) == [n for n in every if n != "a/fork"]
    assert kept(Filters(skip_archived=True), records) == [n for n in every if n != "a/old"]
    assert kept(Filters(languages=("go",)), records) == ["a/go"]
    assert kept(Filters(languages=("GO", "rust")), records) == ["a/go", "b/rust"]
    assert kept(Filters(topics=("CLI",)), records) == ["a/go", "b/rust"]
    assert kept(Filters(topics=("cli", "web")), records) == ["a/go"]
    assert kept(Filters(match=("^a/",)), records) == ["a/fork", "a/old", "a/silent", "a/go"]
    assert kept(Filters(match=("o",), exclude=("fork|old",)), records) == ["a/go"]
    assert kept(Filters(match=("rust", "silent")), records) == ["a/silent", "b/rust"]
    assert kept(Filters(min_stars=10), records) == ["a/go"]
    assert kept(Filters(min_stars=0), records) == ["a/go", "b/rust"]
    assert kept(Filters(pushed_after=T0 - timedelta(1)), records) == ["a/go"]
    assert kept(Filters(limit=2), records) == ["a/fork", "a/old"]
    assert kept(Filters(skip_forks=True, limit=2), records) == ["a/old", "a/silent"]


def test_a_value_not_said_is_never_a_match_and_says_so() -> None:
    selection = Filters(languages=("go",), min_stars=1).selection(compile_regex)
    assert selection.offer(listed()) == "language not said"
    assert selection.offer(listed(language="Go")) == "stars not said"
    assert selection.offer(listed(language="Go", stars=1)) is None
    assert Filters(languages=("go",), min_stars=1).needs() == {"language", "stars"}
    assert Filters(skip_forks=True, pushed_after=T0).needs() == {"pushed_at"}


def test_the_limit_fills_and_the_listing_can_stop() -> None:
    selection = Filters(limit=2, skip_forks=True).selection(compile_regex)
    assert not selection.full
    assert selection.offer(listed("a/1", fork=True)) == "fork"
    assert selection.offer(listed("a/2")) is None
    assert not selection.full
    assert selection.offer(listed("a/3")) is None
    assert selection.full
    assert selection.offer(listed("a/4")) == "limit"
    assert selection.kept == 2


def test_a_pattern_that_backtracks_runs_on_re2() -> None:
    """A server's name against an innocent-looking pattern: Python's ``re`` takes
    time doubling with each letter; RE2 (what the filters are handed) is linear."""
    name = "a/" + "a" * 5_000 + "!"
    selection = Filters(match=("^a/(a|aa)*$",)).selection(compile_regex)
    assert selection.offer(listed(name)) == "not matched"


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"match": ("x" * (MAX_PATTERN_CHARS + 1),)}, "--match pattern of 1001"),
        ({"exclude": ("",)}, "--exclude pattern of 0"),
        ({"match": ("a",) * 101}, "over 100 times"),
        ({"languages": ("",)}, "--language '' is not a name"),
        ({"topics": ("a\x1bb",)}, r"--topic 'a\\x1bb' is not a name"),
        ({"min_stars": -1}, "--min-stars must be a count"),
        ({"limit": 0}, "--limit 0"),
        ({"limit": True}, "--limit must be a count"),
        ({"pushed_after": datetime(2026, 1, 1)}, "time zone"),
    ],
)
def test_filters_that_mean_nothing_are_refused(fields: dict[str, object], why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(why) if "\\" not in why else why):
        Filters(**fields)  # type: ignore[arg-type]


def test_a_pattern_re2_refuses_names_its_option() -> None:
    with pytest.raises(ValueError, match=r"--exclude '\(\?=x\)' cannot be used"):
        Filters(exclude=("(?=x)",)).selection(compile_regex)


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"full_name": "noslash"}, "not owner/name"),
        ({"full_name": "a/\x1b[2J"}, "control characters"),
        ({"full_name": "a/" + "b" * 6000}, "over 5200 characters"),
        ({"clone_url": "file:///etc"}, "file:// URLs are not allowed"),
        ({"clone_url": "/srv/git/x"}, "local paths are not allowed"),
        ({"clone_url": "https://tok:x@h/x"}, "carries user-info"),
        ({"clone_url": "https://-oProxy/x"}, "not a host name"),
        ({"forge_id": ""}, "id is not text"),
        ({"stars": -1}, "stars is not a count"),
        ({"stars": True}, "stars is not a count"),
        ({"size_kib": "12"}, "size_kib is not a count"),
        ({"archived": "false"}, "archived of 'a/b' is not true or false"),
        ({"fork": 1}, "fork of 'a/b' is not true or false"),
        ({"pushed_at": "2026-01-01T00:00:00Z"}, "pushed_at of 'a/b' is not a time"),
        ({"topics": ("x",) * 101}, "over 100 topics"),
        ({"language": "\u202e"}, "control characters"),
        ({"pushed_at": datetime(2026, 1, 1)}, "no time zone"),
    ],
)
def test_a_record_a_server_gets_wrong_is_one_error(fields: dict[str, object], why: str) -> None:
    values: dict[str, object] = {"full_name": "a/b", "clone_url": "https://h/a/b", "forge_id": "1"}
    with pytest.raises(ValueError, match=re.escape(why)) as caught:
        Listed(**(values | fields))  # type: ignore[arg-type]
    assert str(caught.value).isprintable()
    assert len(str(caught.value)) < 200


# The reference: the ADR's sentences, one line each, on Python's re (safe here: the
# generated names and patterns are short).
def by_the_adr(filters: Filters, record: Listed) -> bool:
    name, language = record.full_name, record.language
    topics = {topic.casefold() for topic in record.topics}
    return (
        not (filters.skip_forks and record.fork is True)
        and not (filters.skip_archived and record.archived is True)
        and (
            not filters.languages
            or (
                (language or "").casefold() in {lang.casefold() for lang in filters.languages}
                and language is not None
            )
        )
        and all(topic.casefold() in topics for topic in filters.topics)
        and not any(re.search(pattern, name) for pattern in filters.exclude)
        and (not filters.match or any(re.search(pattern, name) for pattern in filters.match))
        and (
            filters.min_stars is None
            or (record.stars is not None and record.stars >= filters.min_stars)
        )
        and (
            filters.pushed_after is None
            or (record.pushed_at is not None and record.pushed_at > filters.pushed_after)
        )
    )


WORD = st.sampled_from(["go", "Go", "rust", "cli", "CLI", "web"])
MAYBE = st.none() | st.booleans()
RECORD = st.builds(
    listed,
    name=st.sampled_from(["a/x", "a/fork", "b/x-cli", "b/web", "c/go/deep"]),
    fork=MAYBE,
    archived=MAYBE,
    language=st.none() | WORD,
    topics=st.lists(WORD, max_size=3).map(tuple),
    stars=st.none() | st.integers(0, 20),
    pushed_at=st.none() | st.integers(-3, 3).map(lambda days: T0 + timedelta(days)),
)
PATTERN = st.sampled_from(["^a/", "x", "cli$", "^c/.*/deep$", "web|go", "[ab]/x"])
FILTERS = st.builds(
    Filters,
    skip_forks=st.booleans(),
    skip_archived=st.booleans(),
    languages=st.lists(WORD, max_size=2).map(tuple),
    topics=st.lists(WORD, max_size=2).map(tuple),
    match=st.lists(PATTERN, max_size=2).map(tuple),
    exclude=st.lists(PATTERN, max_size=1).map(tuple),
    min_stars=st.none() | st.integers(0, 20),
    pushed_after=st.none() | st.integers(-3, 3).map(lambda days: T0 + timedelta(days)),
    limit=st.none() | st.integers(1, 5),
)


@settings(max_examples=1500, deadline=None)
@given(FILTERS, st.lists(RECORD, max_size=12))
def test_the_selection_keeps_what_the_adr_says(filters: Filters, records: list[Listed]) -> None:
    passing = [record.full_name for record in records if by_the_adr(filters, record)]
    expected = passing if filters.limit is None else passing[: filters.limit]
    assert kept(filters, records) == expected


@settings(max_examples=300, deadline=None)
@given(FILTERS, st.lists(RECORD, max_size=12))
def test_re2_and_re_agree_on_the_names(filters: Filters, records: list[Listed]) -> None:
    by_re = filters.selection(re.compile)
    by_re2 = filters.selection(compile_regex)
    assert [by_re.offer(r) for r in records] == [by_re2.offer(r) for r in records]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=5,
)
FIELDS = [
    "full_name",
    "clone_url",
    "forge_id",
    "default_branch",
    "archived",
    "fork",
    "empty",
    "disabled",
    "mirror",
    "size_kib",
    "language",
    "topics",
    "stars",
    "pushed_at",
]


@settings(max_examples=1000, deadline=None)
@given(st.fixed_dictionaries({}, optional=dict.fromkeys(FIELDS, JSON)))
def test_any_json_a_server_sends_is_a_record_or_one_value_error(fields: dict[str, object]) -> None:
    """What an adapter hands over from a server's JSON, unchecked: a record, or one
    ValueError with a short printable message; never a TypeError or AttributeError."""
    values = {"full_name": "a/b", "clone_url": "https://h/a/b", "forge_id": "1"} | fields
    message = ""
    try:
        Listed(**values)  # type: ignore[arg-type]
    except ValueError as exc:
        message = str(exc)
    assert message.isprintable()
    assert len(message) < 300
