"""Sizes in bytes, as people write them: ``1.5G``, ``512M``, ``64k``, ``1000``."""

from __future__ import annotations

import re

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes in ``text``: a number with an optional binary unit K, M, G or T (KiB, MB,
    ... are read the same way: 1K is 1024 bytes). Raises ValueError otherwise."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a size: {text!r} (write e.g. 1.5G, 512M or 65536)")
    number, unit = match.groups()
    size = int(float(number) * _UNITS[unit.upper()])
    if size < 1:
        raise ValueError(f"a size must be at least 1 byte, got {text!r}")
    return size


def format_size(size: int) -> str:
    """``size`` bytes in the largest binary unit it has one of, with at most two
    decimals: ``1.5 GiB``, ``512 KiB``, ``1000 MiB``, ``10 bytes``. How every limit is
    shown: a limit below 1 MiB must not read "0 MiB"."""
    for unit in ("T", "G", "M", "K"):
        if size >= _UNITS[unit]:
            number = f"{size / _UNITS[unit]:.2f}".rstrip("0").rstrip(".")
            return f"{number} {unit}iB"
    return f"{size} byte" if size == 1 else f"{size} bytes"
