"""Truth for C++ corpus repositories from the frameworks' own listings (issue 41).

    python truth.py gtest SRC NAME REPO LICENSE LISTING...   # --gtest_list_tests outputs
    python truth.py catch2 SRC NAME REPO LICENSE LISTING...  # --list-tests -v high outputs
    python truth.py doctest SRC NAME REPO LICENSE LISTING... # -ltc -r=xml --no-skip outputs

The listing says which tests exist (GoogleTest: ``Suite.Name``, parameterised and typed
instances collapsed to their one definition, ADR 0005); a regular expression over the
sources, not the analyzer's reader, places each at its macro's line. Catch2 lists test
cases with file and line; their SECTIONs (nested tests under ADR 0005, leaves counted)
are found by an independent brace walk over comment- and string-free tokens, checked by
hand on a sample (bench/corpus/README.md). doctest lists test cases with file, line and
whether skipped (its XML reporter, ``--no-skip`` to list them all), a template test
case once per type at one line (collapsed to one, its name without ``<type>``); their
SUBCASEs are added by the same brace walk. Writes the truth JSON to stdout.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys
from xml.etree import ElementTree

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
# doctest's subcases, named as doctest names them (its header's macros).
SUBCASES = {
    "SUBCASE": "",
    "GIVEN": "   Given: ",
    "WHEN": "    When: ",
    "AND_WHEN": "And when: ",
    "THEN": "    Then: ",
    "AND_THEN": "     And: ",
}
SKIPPED = r'//[^\n]*|/\*.*?\*/|R"(?P<d>[^(]*)\(.*?\)(?P=d)"|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\''
TOKEN = re.compile(SKIPPED + r"|[{}]|\b(?:CATCH_)?(?:" + "|".join(SECTIONS) + r")\b", re.S)
DOCTEST_TOKEN = re.compile(
    SKIPPED + r"|[{}]|\b(?:DOCTEST_)?(?:" + "|".join(SUBCASES) + r")\b", re.S
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


def sections(
    text: str, brace: int, token: re.Pattern[str] = TOKEN, labels: dict[str, str] = SECTIONS
) -> list[tuple[int, str]]:
    """The leaf sections of the block opening at ``brace``: (offset, name)."""
    depth = 0
    stack: list[list[object]] = []  # [depth, offset, label, has a child]
    leaves: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for m in token.finditer(text, brace):
        word = m.group(0)
        if word == "{":
            depth += 1
            if pending is not None:
                stack.append([depth, *pending, False])
                pending = None
        elif word == "}":
            if stack and stack[-1][0] == depth:
                _, offset, label, has_child = stack.pop()
                if not has_child:
                    leaves.append((int(str(offset)), str(label)))
            depth -= 1
            if depth == 0:
                break
        elif word[0] not in "\"'/R" and pending is None:
            name = word.removeprefix("CATCH_").removeprefix("DOCTEST_")
            if stack:
                stack[-1][3] = True
            argument = ARGUMENT.match(text, m.end())
            label = argument.group(1) if argument else ""
            literal = re.fullmatch(r'"((?:\\.|[^"\\])*)"', label)
            label = literal.group(1) if literal else label
            pending = (m.start(), labels[name] + label)
    return sorted(leaves)


def doctest(src: pathlib.Path, listings: list[str]) -> list[dict[str, object]]:
    cases: dict[tuple[str, int], tuple[str, bool]] = {}
    files = [str(p.relative_to(src)) for p in src.rglob("*") if p.suffix in (".cc", ".cpp")]
    for listing in listings:
        for case in ElementTree.parse(listing).getroot().iter("TestCase"):
            # __FILE__ as compiled: a path below SRC, or one that ends a single one.
            file = case.get("filename", "")
            if not (src / file).exists():
                (file,) = [f for f in files if f == file or f.endswith("/" + file)]
            text = (src / file).read_text(errors="replace")
            start = sum(len(x) + 1 for x in text.split("\n")[: int(case.get("line", "0")) - 1])
            name = case.get("name", "")
            header = text[start : text.find("\n", start)]
            invoked = re.search(r"TEMPLATE_(?:INVOKE|APPLY)\s*\(\s*(\w+)", header)
            if invoked:  # listed at its instantiation: placed at its definition
                define = r"TEMPLATE_DEFINE\s*\([^;{]*,\s*" + invoked.group(1) + r"\s*\)"
                start = text.rindex("\n", 0, re.search(define, text).start()) + 1  # type: ignore[union-attr]
            if invoked or "TEMPLATE" in header:
                name = re.sub(r"<.*>$", "", name)  # one test whatever its types
            cases[(file, start)] = (name, case.get("skipped") == "true")
    tests: list[dict[str, object]] = []
    for (file, start), (name, skipped) in sorted(cases.items()):
        path = src / file
        text = path.read_text(errors="replace")
        leaves = sections(text, text.index("{", start), DOCTEST_TOKEN, SUBCASES)
        if not leaves:
            tests.append(entry(src, path, text, start, name, skipped))
        for offset, leaf in leaves:
            tests.append(entry(src, path, text, offset, leaf, skipped))
    return tests


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
    tests = {"gtest": gtest, "catch2": catch2, "doctest": doctest}[kind](root, listings)
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
                "frameworks": ["googletest" if kind == "gtest" else kind],
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
