"""Reading one item of a forge's page, field by field (ADR 0023).

An item is a server's JSON: each field's type is checked here or in ``Listed``, and a
misfit is a ValueError naming the field and the item, escaped and cut short: one item,
one error. A field the forge does not send is None ("not said"), never a default.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..._domain.urls import visible

__all__ = ["Fields"]

_SHOWN = 80  # characters of an item's name an error quotes
_TIME_CHARS = 40  # an ISO 8601 time with microseconds and an offset is 32


class Fields:
    """One item; ``name_key`` holds what an error calls it (its full name)."""

    def __init__(self, item: Any, name_key: str) -> None:
        if not isinstance(item, dict):
            raise ValueError(f"an item is a {type(item).__name__}, not an object")
        self.item: dict[str, Any] = item
        name = item.get(name_key)
        shown = visible(repr(name)) if isinstance(name, str) else "an item"
        self.name = shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "…"

    def get(self, key: str) -> Any:
        """The value as sent (``Listed`` checks its type), None when not sent."""
        return self.item.get(key)

    def number(self, key: str) -> str:
        """A numeric id as text; ``True`` is no id."""
        value = self.item.get(key)
        if type(value) is not int:
            raise ValueError(f"the {key} of {self.name} is not a number")
        return str(value)

    def named(self, key: str) -> str | None:
        """A name the forge sends as ``""`` when there is none (Gitea's, Bitbucket's
        language): None then."""
        value = self.item.get(key)
        return None if value == "" else value

    def topics(self, key: str) -> tuple[Any, ...]:
        value = self.item.get(key)
        if value is not None and not isinstance(value, list):
            raise ValueError(f"the {key} of {self.name} are not a list")
        return tuple(value or ())

    def flag_of_presence(self, key: str) -> bool | None:
        """True when ``key`` holds an object (a fork's parent); None when the forge does
        not send the key; False when it sends ``null``."""
        if key not in self.item:
            return None
        return self.item[key] is not None

    def time(self, key: str) -> datetime | None:
        """An ISO 8601 time (``Listed`` requires its zone), None when not sent."""
        value = self.item.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or len(value) > _TIME_CHARS:
            raise ValueError(f"the {key} of {self.name} is not a time")
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"the {key} of {self.name} is not a time: {visible(value)}") from None

    def kib(self, key: str) -> int | None:
        """A size the forge gives in bytes, in KiB rounded up (a byte is not empty)."""
        value = self.item.get(key)
        if value is None:
            return None
        if type(value) is not int or value < 0:
            raise ValueError(f"the {key} of {self.name} is not a size")
        return -(-value // 1024)
