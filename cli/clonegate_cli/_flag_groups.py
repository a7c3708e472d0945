"""A group of options declared once, as the fields of a frozen dataclass (issue 17).

Each field is one command-line option: its type, flags, help and default in its
``Annotated`` hint. A command takes the whole group by declaring one keyword-only
parameter of the dataclass's type and the decorator :func:`options_of` makes for it:
Typer lists the options where that parameter was, and the command receives their
values as one instance (``CloneFlags``, ``ListingFlags``).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any

import typer

__all__ = ["hints_of", "options_of"]

Command = Callable[..., None]


def options_of(flags: type) -> Callable[[Command], Command]:
    """The decorator that gives a command the options of the dataclass ``flags``."""
    fields = dataclasses.fields(flags)
    hints = hints_of(flags)
    # What Typer reads from a command's signature: one parameter per field, keyword-only
    # like the parameter it replaces (Typer passes every value by name).
    parameters = [
        inspect.Parameter(
            f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hints[f.name]
        )
        for f in fields
    ]

    def decorate(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        (slot,) = (p for p in signature.parameters.values() if p.annotation is flags)
        if slot.kind is not inspect.Parameter.KEYWORD_ONLY:
            raise TypeError(
                f"{command.__name__}: the {flags.__name__} parameter must be keyword-only"
            )
        replaced: list[inspect.Parameter] = []
        for parameter in signature.parameters.values():
            replaced += parameters if parameter is slot else [parameter]

        @functools.wraps(command)
        def with_flags(**values: Any) -> None:
            group = flags(**{f.name: values.pop(f.name) for f in fields})
            command(**values, **{slot.name: group})

        # inspect.signature, which Typer calls, returns this instead of following
        # __wrapped__.
        with_flags.__signature__ = signature.replace(parameters=replaced)  # type: ignore[attr-defined]
        return with_flags

    return decorate


def hints_of(flags: type) -> dict[str, Any]:
    """The ``Annotated`` hints of the dataclass ``flags``' fields, Typer's declarations
    in them. ``typer`` is given: a flags module may import it for type checking only,
    so that it loads without Typer (``_clone_options``, issue 47)."""
    return typing.get_type_hints(flags, localns={"typer": typer}, include_extras=True)
