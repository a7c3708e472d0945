"""Limits are shown in a unit that fits them: a limit under 1 MiB never reads "0 MiB"
(issue 38); one formatter, ``format_size``, for every message that shows a limit."""

from __future__ import annotations

import errno

import pytest

from clonegate import CloneSettings, DulwichVCS, ErrorKind
from clonegate._adapters.git.worker_errors import classify
from clonegate._domain.sizes import format_size
from clonegate.errors import TooLargeError

from .support.servers import GitDaemon


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        (1, "1 byte"),
        (10, "10 bytes"),
        (1023, "1023 bytes"),
        (512 << 10, "512 KiB"),
        (1_000_000, "976.56 KiB"),
        (1000 << 20, "1000 MiB"),  # not 1e+03
        (1536 << 20, "1.5 GiB"),
        (2 << 40, "2 TiB"),
    ],
)
def test_a_size_is_shown_in_the_largest_unit_it_has_one_of(size: int, shown: str) -> None:
    assert format_size(size) == shown


class _SmallLimits:
    connect_timeout = read_timeout = 1.0
    max_memory = 300 << 10
    max_file_size = 512 << 10


@pytest.mark.parametrize(
    ("raised", "reason"),
    [
        (OSError(errno.EFBIG, "File too large"), "passed the size limit of 512 KiB"),
        (MemoryError(), "more than its memory limit of 300 KiB"),
    ],
)
def test_a_limit_under_1_mib_is_not_shown_as_0_mib(raised: BaseException, reason: str) -> None:
    kind, message = classify(raised, _SmallLimits(), has_credentials=False, mid_transfer=True)
    assert kind == ErrorKind.TOO_LARGE
    assert reason in message
    assert "0 MiB" not in message


async def test_a_clone_past_a_small_size_limit_names_it_in_kib(daemon: GitDaemon) -> None:
    vcs = DulwichVCS(CloneSettings(max_repo_size=512 << 10))
    with pytest.raises(TooLargeError) as refused:
        await vcs.clone(daemon.url("big"))
    assert "more than 512 KiB of pack data" in str(refused.value)
