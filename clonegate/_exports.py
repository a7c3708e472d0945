"""How a public module of clonegate exports its names: from one table, each on first use.

A public module (``clonegate``, ``clonegate.store``, ``clonegate.cluster``, ...) keeps
one table, the module each of its names lives in, and gets from it here its
``__all__``, its ``__getattr__`` (which imports a name's module the first time the
name is read: ``import clonegate`` stays cheap, and trio, dulwich, SQLite and the
Redis client load only when a program uses them) and its ``__dir__``. The type
checkers' imports in each module are checked against its table by
tests/test_public_api.py, so the table is the one list (ADR 0001).
"""

from __future__ import annotations

import sys

# Not typing's: a few ms before the command line starts its zygote (ADR 0003).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


def where_each_name_lives(table: Mapping[str, str]) -> dict[str, str]:
    """``{name: module}`` from a table of ``{module: "Name name ..."}``."""
    return {name: module for module, names in table.items() for name in names.split()}


def exports(
    public: str, table: Mapping[str, str]
) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for the public module ``public``.

    ``table`` maps a module, relative to the ``clonegate`` package, to the names of it
    that ``public`` exports, separated by spaces.
    """
    modules = where_each_name_lives(table)
    names = sorted(modules)

    def __getattr__(name: str) -> object:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {public!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(module, "clonegate"), name)
        setattr(sys.modules[public], name, value)  # later reads skip this function
        return value

    def __dir__() -> list[str]:
        return list(names)

    return list(names), __getattr__, __dir__
