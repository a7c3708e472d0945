"""What .ci/refresh-lock needs to know about uv.lock (ADR 0009).

python .ci/lockinfo.py runtime          what clonegate needs at run time, a name a line
python .ci/lockinfo.py pin-build        pin hatchling and its needs, as locked, for builds
python .ci/lockinfo.py moved OLD_LOCK   what changed between OLD_LOCK and uv.lock
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def packages(lock: Path) -> dict[str, dict[str, object]]:
    return {p["name"]: p for p in tomllib.loads(lock.read_text())["package"]}


def closure(locked: dict[str, dict[str, object]], roots: list[str]) -> list[str]:
    """``roots`` and everything they depend on at run time (no groups, no extras)."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            deps = locked[name].get("dependencies", [])
            assert isinstance(deps, list)
            todo.extend(d["name"] for d in deps)
    return sorted(seen)


def main(argv: list[str]) -> int:
    lock = ROOT / "uv.lock"
    locked = packages(lock)
    match argv:
        case ["runtime"]:
            for name in closure(locked, ["clonegate"]):
                if name != "clonegate":
                    print(name)
        case ["pin-build"]:
            pins = [f'"{n}=={locked[n]["version"]}"' for n in closure(locked, ["hatchling"])]
            pyproject = ROOT / "pyproject.toml"
            text, count = re.subn(
                r"^build-constraint-dependencies = \[.*\]$",
                f"build-constraint-dependencies = [{', '.join(pins)}]",
                pyproject.read_text(),
                flags=re.MULTILINE,
            )
            if count != 1:
                sys.exit("pyproject.toml: no one-line build-constraint-dependencies to rewrite")
            pyproject.write_text(text)
        case ["moved", old_lock]:
            before = packages(Path(old_lock))
            moved = False
            for name in sorted(before.keys() | locked.keys()):
                old = before.get(name, {}).get("version", "-")
                new = locked.get(name, {}).get("version", "-")
                if old != new:
                    print(f"  {name}: {old} -> {new}")
                    moved = True
            if not moved:
                print("  nothing")
        case _:
            sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
