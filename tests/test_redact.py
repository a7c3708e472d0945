"""``redact``: the user-info of every URL in a text masked, in time linear in the text.

The rule is what the regular expression ``(?i)\\b([a-z][a-z0-9+.-]*://)\\S*@`` replaced
by ``\\1***@`` says (from a scheme to the last ``@`` before whitespace); that
expression backtracks from every position and a server's message is hostile, so
``redact`` scans instead, and these tests hold the two to the same answers."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from clonegate._domain.urls import redact

RULE = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)\S*@")


def _by_the_rule(text: str) -> str:
    return RULE.sub(r"\1***@", text)


# Few characters, so that schemes, "://", "@", word starts and whitespace collide often.
TEXT = st.text(alphabet="ab1_+.-:/@ \tZé", max_size=40)


@settings(max_examples=3000, deadline=None)
@given(TEXT)
def test_redact_says_what_the_rule_says(text: str) -> None:
    assert redact(text) == _by_the_rule(text)


def test_redact_masks_urls_among_words() -> None:
    text = "fetch https://alice:p@ss/w0rd@git.example.com/r.git failed; git://h/x ok"
    assert redact(text) == "fetch https://***@git.example.com/r.git failed; git://h/x ok"


def test_a_long_run_without_an_at_is_read_once() -> None:
    """4 MB of ``a://`` or ``a.a.``: the expression took 38 s for 400 KB (quadratic), so
    this would run for hours; the scan reads it in one pass. The test fails by pytest's
    timeout on a quadratic ``redact``."""
    for run in ("a://" * 1_000_000, "a." * 2_000_000 + "://x", "a://" * 1_000_000 + "@h"):
        masked = redact(run)
        assert "@" not in masked or masked.startswith("a://***@")
