"""Truth for the Python family (pytest and unittest), from the frameworks' own collectors.

Runs inside a throw-away venv that holds the project and its test dependencies, so it
uses only the standard library (and pytest, imported by pytest itself when it loads this
module as a plugin). Three uses (bench/corpus/python/truth.sh drives them):

    PYTRUTH_OUT=raw.json PYTRUTH_ROOT=REPO pytest --collect-only -q -p pytruth
    python pytruth.py unittest REPO raw.json (--names CALLABLE | --discover START PATTERN)
    python pytruth.py build raw.json truth.json --meta KEY=VALUE ... [--note TEXT ...]

The first two write one raw record per collected item (its module, class path, function,
the ``def`` line, its markers' verdict); ``build`` applies ADR 0005 (one entry per
definition) and writes the truth file (bench/corpus/README.md).
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import inspect
import json
import os
import sys
import unittest
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

# Set on whatever ``unittest.skipIf``/``skipUnless`` decorate, whatever the condition:
# ADR 0005 counts a conditional skip as skipped, and unittest leaves no trace of one
# whose condition is false on this machine.
CONDITIONAL = "__pytruth_conditional_skip__"


def _recording(original: Callable[[object, str], Callable[[Any], Any]]) -> Any:
    def factory(condition: object, reason: str) -> Callable[[Any], Any]:
        decorate = original(condition, reason)

        def mark(obj: Any) -> Any:
            setattr(obj, CONDITIONAL, reason)
            return decorate(obj)  # the framework's own decorator, unchanged

        return mark

    return factory


def install_recorders() -> None:
    """Before any test module is imported (``-p`` loads this plugin first)."""
    for name in ("skipIf", "skipUnless"):
        patched = _recording(getattr(unittest.case, name))
        setattr(unittest.case, name, patched)
        setattr(unittest, name, patched)


install_recorders()


@functools.cache
def _def_lines(path: str) -> dict[int, tuple[str, int]]:
    """First line of each function (its first decorator's) -> (name, ``def`` line).

    A code object's ``co_firstlineno`` is the first decorator's line; ADR 0005 wants the
    ``def`` line, so the file's syntax tree translates one into the other.
    """
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return {}
    lines = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            lines[first] = (node.name, node.lineno)
    return lines


@functools.cache
def _class_lines(path: str) -> dict[tuple[str, ...], int]:
    """Class path (nested class names) -> its ``class`` line, to list classes in source
    order: one method inherited by several classes is then listed in the order the
    classes are written, as the analyzer lists them."""
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return {}
    lines = {}
    todo: list[tuple[tuple[str, ...], ast.AST]] = [((), tree)]
    while todo:
        path_, node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                lines[(*path_, child.name)] = child.lineno
                todo.append(((*path_, child.name), child))
    return lines


def _order(root: str, file: str | None, classes: list[str]) -> list[int]:
    lines = _class_lines(os.path.join(root, file)) if file else {}
    return [lines.get(tuple(classes[: i + 1]), 0) for i in range(len(classes))]


def _chain(obj: Any) -> Iterator[Any]:
    """The object and everything it wraps (``functools.wraps`` sets ``__wrapped__``)."""
    seen: set[int] = set()
    while obj is not None and id(obj) not in seen:
        seen.add(id(obj))
        yield obj
        obj = getattr(obj, "__wrapped__", None)


def definition(func: Any) -> dict[str, Any]:
    """Where the innermost function of ``func`` is written: file, name, ``def`` line."""
    code = None
    for obj in _chain(getattr(func, "__func__", func)):
        code = getattr(getattr(obj, "__func__", obj), "__code__", code)
    if code is None:
        return {"def_file": None, "def_name": None, "line": None}
    hit = _def_lines(code.co_filename).get(code.co_firstlineno)
    line = hit[1] if hit and hit[0] == code.co_name else None
    return {"def_file": os.path.realpath(code.co_filename), "def_name": code.co_name, "line": line}


def unittest_marks(cls: Any, func: Any) -> tuple[bool, bool]:
    """(skipped, xfail) from unittest's own attributes on the method or its class."""
    chain = list(_chain(getattr(func, "__func__", func)))
    skipped = any(getattr(o, "__unittest_skip__", False) or hasattr(o, CONDITIONAL) for o in chain)
    skipped = skipped or getattr(cls, "__unittest_skip__", False) or hasattr(cls, CONDITIONAL)
    xfail = any(getattr(o, "__unittest_expecting_failure__", False) for o in chain)
    return bool(skipped), xfail


def _relative(path: str | None, root: str) -> str | None:
    if path is None:
        return None
    rel = os.path.relpath(os.path.realpath(path), root)
    return None if rel.startswith("..") else Path(rel).as_posix()


# pytest plugin -------------------------------------------------------------------------

_deselected: list[pytest.Item] = []
_problems: list[str] = []


def pytest_deselected(items: list[pytest.Item]) -> None:
    _deselected.extend(items)  # still test definitions: ADR 0005 counts them


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """Collect PYTRUTH_KEEP's files although a conftest's ``collect_ignore`` drops them.

    ``collect_ignore`` is code that may depend on the machine (attrs drops a file before
    Python 3.14); ADR 0005 counts what is written. Hooks run newest plugin first, and
    ``-p`` plugins come after pytest's own ``main``, which reads ``collect_ignore``.
    """
    keep = os.environ.get("PYTRUTH_KEEP", "").split()
    return False if any(collection_path.match(k) for k in keep) else None


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.outcome != "passed":
        _problems.append(f"{report.nodeid}: collection {report.outcome}: {report.longrepr}")


def _pytest_record(item: pytest.Item, root: str, deselected: bool) -> dict[str, Any]:
    import pytest

    record: dict[str, Any] = {"id": item.nodeid, "deselected": deselected}
    if not isinstance(item, pytest.Function):
        return record | {"kind": type(item).__name__, "file": _relative(str(item.path), root)}
    callspec = getattr(item, "callspec", None)
    param_marks = list(callspec.marks) if callspec else []
    # Marks of the function, its classes and module (iter_markers merges them); a mark
    # given to one parameter set (pytest.param(marks=...)) is not the definition's.
    names = [m.name for m in item.iter_markers() if not any(m is p for p in param_marks)]
    skipped, xfail = unittest_marks(item.cls, item.obj)
    file = _relative(str(item.path), root)
    classes = [n.name for n in item.listchain() if isinstance(n, pytest.Class)]
    return record | {
        "kind": "function",
        "file": file,
        "classes": classes,
        "class_lines": _order(root, file, classes),
        "name": item.originalname,
        "skipped": skipped or "skip" in names or "skipif" in names,
        "xfail": xfail or "xfail" in names,
        "param_marks": sorted({m.name for m in param_marks}),
        **definition(item.obj),
    }


def pytest_collection_finish(session: pytest.Session) -> None:
    root = os.path.realpath(os.environ.get("PYTRUTH_ROOT", str(session.config.rootpath)))
    records = [_pytest_record(i, root, False) for i in session.items]
    records += [_pytest_record(i, root, True) for i in _deselected]
    for r in records:
        r["def_file"] = _relative(r.get("def_file"), root)
    out = {"runner_count": len(records), "records": records, "problems": _problems}
    Path(os.environ["PYTRUTH_OUT"]).write_text(json.dumps(out, indent=1), encoding="utf-8")


# unittest ------------------------------------------------------------------------------


def _cases(suite: unittest.TestSuite | unittest.TestCase) -> Iterator[unittest.TestCase]:
    if isinstance(suite, unittest.TestCase):
        yield suite
        return
    for child in suite:
        yield from _cases(child)


def _home(cls: type, root: str) -> tuple[str | None, str]:
    """The project module that binds ``cls`` (the loader found it there) and the name.

    A class's own module first; a decorator may return a subclass made elsewhere
    (tornado's ``abstract_base_test`` wrapper), which is then written where the module
    of the class it wraps (next in the method resolution order) binds it.
    """
    names = [c.__module__ for c in cls.__mro__]
    names += sorted(n for n in list(sys.modules) if n not in names)
    for module in (sys.modules.get(n) for n in names):
        file = _relative(getattr(module, "__file__", None), root)
        if file is None:
            continue
        for name, value in vars(module).items():
            if value is cls:
                return file, name
    return _relative(inspect.getsourcefile(cls), root), cls.__qualname__


def unittest_records(suite: unittest.TestSuite, root: str) -> list[dict[str, Any]]:
    records = []
    for case in _cases(suite):
        cls, name = type(case), case._testMethodName
        func = getattr(cls, name, None)
        record: dict[str, Any] = {"id": case.id(), "deselected": False}
        file, bound = _home(cls, root)
        # A class from outside the project (doctest's DocTestCase) is not a definition.
        if file and not isinstance(case, unittest.FunctionTestCase) and inspect.isfunction(func):
            skipped, xfail = unittest_marks(cls, func)
            where = definition(func)
            where["def_file"] = _relative(where["def_file"], root)
            record |= {"kind": "function", "file": file, "classes": [bound], "name": name}
            record["class_lines"] = _order(root, file, [bound])
            record |= {"skipped": skipped, "xfail": xfail, "param_marks": [], **where}
        else:  # doctests, loader errors (unittest.loader._FailedTest) and the like
            record |= {"kind": cls.__name__, "file": None}
        records.append(record)
    return records


def run_unittest(args: argparse.Namespace) -> None:
    root = os.path.realpath(args.root)
    sys.path.insert(0, root)
    if args.names:
        module, _, attr = args.names.partition(":")
        suite = getattr(importlib.import_module(module), attr)()
    else:
        suite = unittest.TestLoader().discover(args.discover[0], pattern=args.discover[1])
    records = unittest_records(suite, root)
    out = {"runner_count": suite.countTestCases(), "records": records, "problems": []}
    Path(args.out).write_text(json.dumps(out, indent=1), encoding="utf-8")


# policy --------------------------------------------------------------------------------


def build(args: argparse.Namespace) -> None:
    """ADR 0005 on the raw records: one entry per (module, class path, function)."""
    raw = json.loads(Path(args.raw).read_text(encoding="utf-8"))
    entries: dict[tuple[str, tuple[str, ...], str], dict[str, Any]] = {}
    dropped: dict[str, list[str]] = {}
    order: dict[tuple[str, tuple[str, ...], str], tuple[Any, ...]] = {}
    cases = 0
    for r in raw["records"]:
        reason = None
        if r["kind"] != "function":
            reason = f"{r['kind']} items (not test definitions)"
        elif r["def_file"] != r["file"]:
            reason = "written in another module (a base class or an import; ADR 0005)"
        elif r["line"] is None or r["def_name"] != r["name"]:
            reason = "made at run time (no `def` of that name where the code is)"
        if reason:
            dropped.setdefault(reason, []).append(r["id"])
            continue
        key = (r["file"], tuple(r["classes"]), r["name"])
        status = "skipped" if r["skipped"] else "xfail" if r["xfail"] else "active"
        if key in entries:
            cases += 1
            if entries[key]["status"] != status:
                raise SystemExit(f"{r['id']}: cases of one definition disagree on status")
            continue
        entries[key] = {"file": r["file"], "line": r["line"], "name": r["name"], "status": status}
        order[key] = (r["file"], *r["class_lines"], r["line"])
    names = {(e["file"], e["name"]) for e in entries.values()}
    notes = list(args.note)
    if cases:
        notes.append(f"{cases} further items are parametrized cases of a listed definition")
    listed = [r for r in raw["records"] if (r.get("file"), r.get("name")) in names]
    deselected = sorted({f"{r['file']}::{r['name']}" for r in listed if r["deselected"]})
    if deselected:
        selected = sum(not r["deselected"] for r in raw["records"])
        notes.append(
            f"pytest selects {selected} of {raw['runner_count']} items by default (the config's"
            f" addopts deselect the rest); listed anyway, the {len(deselected)} definitions"
            " of deselected items: " + ", ".join(deselected)
        )
    # pytest.param(..., marks=...) marks one case, not the definition: its status ignores it.
    by_param = sorted(
        {
            f"{r['file']}::{r['name']} ({', '.join(r['param_marks'])})"
            for r in listed
            if set(r.get("param_marks", [])) & {"skip", "skipif", "xfail"}
        }
    )
    if by_param:
        notes.append(
            "cases marked by pytest.param only (definition's status kept): " + ", ".join(by_param)
        )
    for reason, ids in sorted(dropped.items()):
        notes.append(f"not listed, {len(ids)} {reason}: " + ", ".join(ids[:5]))
    notes += [f"collection problem: {p}"[:300] for p in raw["problems"]]
    meta = dict(kv.split("=", 1) for kv in args.meta)
    truth = {
        "name": meta["name"],
        "repository": meta["repository"],
        "commit": meta["commit"],
        "committed": meta["committed"],
        "license": meta["license"],
        "frameworks": meta["frameworks"].split(","),
        "tool": meta["tool"],
        "runner_count": raw["runner_count"],
        "notes": notes,
        "tests": [entries[k] for k in sorted(entries, key=lambda k: (*order[k], k[2]))],
    }
    Path(args.out).write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
    print(f"{meta['name']}: {len(entries)} tests, runner {raw['runner_count']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ut = sub.add_parser("unittest", help="list a unittest suite's tests")
    ut.add_argument("root")
    ut.add_argument("out")
    how = ut.add_mutually_exclusive_group(required=True)
    how.add_argument("--names", help="MODULE:CALLABLE returning the project's suite")
    how.add_argument("--discover", nargs=2, metavar=("START", "PATTERN"))
    bd = sub.add_parser("build", help="apply ADR 0005 and write the truth file")
    bd.add_argument("raw")
    bd.add_argument("out")
    bd.add_argument("--meta", action="append", default=[])
    bd.add_argument("--note", action="append", default=[])
    args = parser.parse_args()
    run_unittest(args) if args.command == "unittest" else build(args)


if __name__ == "__main__":
    main()
