"""How an adapter's settings type declares a field: its default and its help, once.

Each adapter owns one frozen settings type (ADR 0017). Its fields carry their help
text in the field's metadata, so that the command line shows what the library
documents, and a test checks that the command line's defaults are these.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["help_of", "setting"]


def setting(default: Any, help: str) -> Any:
    """A settings field with ``default`` and the one-line ``help`` its option shows."""
    return dataclasses.field(default=default, metadata={"help": help})


def help_of(settings: type, name: str) -> str:
    """The help text of field ``name`` of the settings type ``settings``."""
    (field,) = (f for f in dataclasses.fields(settings) if f.name == name)
    help_text: str = field.metadata["help"]
    return help_text
