"""Truth for C++ corpus repositories from the frameworks' own listings (issue 41).

    python truth.py gtest SRC NAME REPO LICENSE LISTING...   # --gtest_list_tests outputs
    python truth.py catch2 SRC NAME REPO LICENSE LISTING...  # --list-tests -v high outputs

The listing says which tests exist (GoogleTest: ``Suite.Name``, parameterised and typed
instances collapsed to their one definition, ADR 0005); a regular expression over the
sources, not the analyzer's reader, places each at its macro's line. Catch2 lists test
cases with file and line; their SECTIONs (nested tests under ADR 0005, leaves counted)
are found by an independent brace walk over comment- and string-free tokens, checked by
hand on a sample (bench/corpus/README.md). Writes the truth JSON to stdout.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

SECTIONS = {
    "SECTION": "",
    "DYNAMIC_SECTION": "",
    "GIVEN": "Given: ",
    "AND_GIVEN": "And given: ",
    "WHEN": "When: ",
    "AND_WHEN": "And when: ",
    "THEN": "Then: ",
    "AND_THEN": "And: ",
}
TOKEN = re.compile(
    r'//[^\n]*|/\*.*?\*/|R"(?P<d>[^(]*)\(.*?\)(?P=d)"|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\''
    r"|[{}]|\b(?:CATCH_)?(?:" + "|".join(SECTIONS) + r")\b",
    re.S,
)
ARGUMENT = re.compile(r'\s*\(\s*("(?:\\.|[^"\\])*"|[^)"]*?)\s*[,)]')


def gtest(src: pathlib.Path, listings: list[str]) -> list[dict[str, object]]:
    names: set[tuple[str, str]] = set()
    for listing in listings:
        suite = ""
        for raw in pathlib.Path(listing).read_text().splitlines():
            line = raw.split("#")[0].rstrip()
            if not line:
                continue
            if not raw.startswith(" "):
                suite = line.rstrip(".")
                # Prefix/Suite (TEST_P instances), Suite/0 (typed): the written suite.
                parts = suite.split("/")
                suite = parts[1] if len(parts) == 2 and not parts[1].isdigit() else parts[0]
            else:
                names.add((suite, line.strip().split("/")[0]))
    tests = []
    macro = re.compile(
        r"^\s*(?:GTEST_TEST|TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)",
        re.M,
    )
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cc", ".cpp", ".cxx") or "third_party" in path.parts:
            continue
        text = path.read_text(errors="replace")
        for m in macro.finditer(text):
            key = (m.group(1), m.group(2))
            if key in names:
                names.discard(key)
                skipped = any(n.startswith("DISABLED_") for n in key)
                tests.append(entry(src, path, text, m.start(), key[1], skipped))
    if names:
        sys.exit(f"listed but not found in the sources: {sorted(names)}")
    return tests


def catch2(src: pathlib.Path, listings: list[str]) -> list[dict[str, object]]:
    cases: list[tuple[str, str, int, str]] = []
    for listing in listings:
        lines = pathlib.Path(listing).read_text().splitlines()
        for i, text_line in enumerate(lines):
            m = re.fullmatch(r"\s+(\S.*):(\d+)", text_line)
            if m and i > 0 and (src / m.group(1)).exists():
                tags = lines[i + 2].strip() if i + 2 < len(lines) else ""
                cases.append((lines[i - 1].strip(), m.group(1), int(m.group(2)), tags))
    tests: list[dict[str, object]] = []
    for name, file, line, tags in cases:
        path = src / file
        text = path.read_text(errors="replace")
        start = sum(len(x) + 1 for x in text.split("\n")[: line - 1])
        hidden = "[.]" in tags or "[!hide]" in tags or re.search(r"\[\.\w", tags) is not None
        leaves = sections(text, text.index("{", start))
        if not leaves:
            tests.append(entry(src, path, text, start, name, hidden))
        for offset, leaf in leaves:
            tests.append(entry(src, path, text, offset, leaf, hidden))
    return tests


def sections(text: str, brace: int) -> list[tuple[int, str]]:
    """The leaf sections of the block opening at ``brace``: (offset, name)."""
    depth = 0
    stack: list[list[object]] = []  # [depth, offset, label, has a child]
    leaves: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for m in TOKEN.finditer(text, brace):
        token = m.group(0)
        if token == "{":
            depth += 1
            if pending is not None:
                stack.append([depth, *pending, False])
                pending = None
        elif token == "}":
            if stack and stack[-1][0] == depth:
                _, offset, label, has_child = stack.pop()
                if not has_child:
                    leaves.append((int(str(offset)), str(label)))
            depth -= 1
            if depth == 0:
                break
        elif token[0] not in "\"'/R" and pending is None:
            name = token.removeprefix("CATCH_")
            if stack:
                stack[-1][3] = True
            argument = ARGUMENT.match(text, m.end())
            label = argument.group(1) if argument else ""
            literal = re.fullmatch(r'"((?:\\.|[^"\\])*)"', label)
            label = literal.group(1) if literal else label
            pending = (m.start(), SECTIONS[name] + label)
    return sorted(leaves)


def entry(
    src: pathlib.Path, path: pathlib.Path, text: str, offset: int, name: str, skipped: bool
) -> dict[str, object]:
    return {
        "file": str(path.relative_to(src)),
        "line": text.count("\n", 0, offset) + 1,
        "name": name,
        "status": "skipped" if skipped else "active",
    }


def main() -> None:
    kind, src, name, repo, license_ = sys.argv[1:6]
    listings = sys.argv[6:]
    root = pathlib.Path(src)
    tests = gtest(root, listings) if kind == "gtest" else catch2(root, listings)
    commit = subprocess.check_output(["git", "-C", src, "log", "-1", "--format=%H %cs"], text=True)
    sha, date = commit.split()
    print(
        json.dumps(
            {
                "name": name,
                "repository": repo,
                "commit": sha,
                "committed": date,
                "license": license_,
                "frameworks": ["googletest" if kind == "gtest" else "catch2"],
                "tool": "",
                "runner_count": 0,
                "notes": [],
                "tests": sorted(tests, key=lambda t: (t["file"], t["line"])),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
