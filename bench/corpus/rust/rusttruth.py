"""Turn `cargo test -- --list --format json` into a truth file under ADR 0005.

libtest lists what was compiled here, one entry per generated test, at the span of the
test's name. The policy counts places a test is written, so this script:
- keeps one entry per (file, `fn` line): a test in a macro invocation that a template
  expands twice is written once;
- drops tests whose name is not spelled after `fn` in the source, or sits inside a
  `macro_rules!` body: a template made them (ADR 0005), counted in a note;
- marks `skipped` a test that libtest ignores here or whose attributes hold an `ignore`
  under a condition (`cfg_attr(miri, ignore)`, `rustversion::attr`), which libtest
  resolves for this machine only;
- adds test functions found in the compiled source files (cargo's dep-info) that the
  listing lacks: written tests whose `#[cfg]` is false here (loom, other platforms).

The lexer below only separates comments, literals, words and brackets: enough to find
`fn`, attributes and `macro_rules!` bodies without a parser the analyzer might share.

Usage: rusttruth.py SRC_DIR META_JSON OUT_JSON [PACKAGE_DIR LISTING_JSON DEPINFO_DIR]...
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Order matters: raw strings and chars before words and lifetimes.
_TOKEN = re.compile(
    r"""(?P<ws>\s+)
    |(?P<line_comment>//[^\n]*)
    |(?P<raw>(?:b|c)?r(?P<hashes>\#*)")
    |(?P<string>(?:b|c)?"(?:[^"\\]|\\.)*")
    |(?P<char>b?'(?:[^'\\\n]|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]{1,6}\}|.))')
    |(?P<lifetime>'[A-Za-z_]\w*)
    |(?P<word>(?:r\#)?[A-Za-z_]\w*)
    |(?P<number>\d[\w.]*)
    |(?P<punct>.)""",
    re.VERBOSE | re.DOTALL,
)
_OPEN = {"(": ")", "[": "]", "{": "}"}


@dataclass
class Token:
    text: str
    offset: int
    line: int
    col: int  # 1-based, in characters, as libtest's start_col
    match: int = -1  # index of the matching bracket


def lex(src: str) -> list[Token]:
    """Words, literals and punctuation with positions; comments and blanks dropped."""
    tokens: list[Token] = []
    line_starts = [0] + [i + 1 for i, c in enumerate(src) if c == "\n"]
    line = 0
    pos = 0
    while pos < len(src):
        if src.startswith("/*", pos):  # nested block comments
            depth, end = 0, pos
            while end < len(src):
                if src.startswith("/*", end):
                    depth, end = depth + 1, end + 2
                elif src.startswith("*/", end):
                    depth, end = depth - 1, end + 2
                    if depth == 0:
                        break
                else:
                    end += 1
            pos = end
            continue
        m = _TOKEN.match(src, pos)
        assert m is not None  # `punct` matches any character
        end = m.end()
        if m.group("raw"):
            close = src.find('"' + m.group("hashes"), end)
            end = len(src) if close < 0 else close + 1 + len(m.group("hashes"))
        if not (m.group("ws") or m.group("line_comment")):
            while line + 1 < len(line_starts) and line_starts[line + 1] <= pos:
                line += 1
            tokens.append(Token(src[pos:end], pos, line + 1, pos - line_starts[line] + 1))
        pos = end
    stack: list[int] = []
    for i, tok in enumerate(tokens):
        if tok.text in _OPEN:
            stack.append(i)
        elif tok.text in _OPEN.values() and stack:
            j = stack.pop()
            tokens[i].match, tokens[j].match = j, i
    return tokens


def macro_rules_spans(tokens: list[Token]) -> list[tuple[int, int]]:
    """Offsets of each `macro_rules! name { ... }` body."""
    spans = []
    for i, tok in enumerate(tokens[:-3]):
        body = tokens[i + 3]
        if tok.text == "macro_rules" and tokens[i + 1].text == "!" and body.match > i:
            spans.append((body.offset, tokens[body.match].offset))
    return spans


def attributes(tokens: list[Token], fn_index: int) -> list[list[str]]:
    """Outer attributes before `fn` (qualifiers skipped), each as its token texts."""
    i = fn_index - 1
    while i >= 0 and (
        tokens[i].text in ("pub", "async", "unsafe", "const", "extern", "default")
        or tokens[i].text.startswith('"')
        or (tokens[i].text == ")" and tokens[tokens[i].match - 1].text == "pub")
    ):
        i = tokens[i].match - 1 if tokens[i].text == ")" else i - 1
    attrs = []
    while i > 0 and tokens[i].text == "]" and tokens[tokens[i].match - 1].text == "#":
        attrs.append([t.text for t in tokens[tokens[i].match + 1 : i]])
        i = tokens[i].match - 2
    return attrs


def is_test_attr(attr: list[str]) -> bool:
    """`#[test]` or any path ending in `::test` (`#[tokio::test(...)]`)."""
    path = []
    for text in attr:
        if text == "(" or text == "=":
            break
        path.append(text)
    return bool(path) and path[-1] == "test"


def ignore_kind(attrs: list[list[str]]) -> str | None:
    """'always' for `#[ignore]`, 'conditional' for an `ignore` inside another attribute."""
    for attr in attrs:
        if attr and attr[0] == "ignore":
            return "always"
    if any("ignore" in attr[1:] for attr in attrs):
        return "conditional"
    return None


@dataclass
class Definition:
    file: str
    line: int
    name: str
    ignore: str | None


class Source:
    """One source file's tokens, for looking up test definitions."""

    def __init__(self, path: Path) -> None:
        self.tokens = lex(path.read_text(encoding="utf-8"))
        self.spans = macro_rules_spans(self.tokens)
        self.at = {(t.line, t.col): i for i, t in enumerate(self.tokens)}

    def in_template(self, index: int) -> bool:
        offset = self.tokens[index].offset
        return any(a < offset < b for a, b in self.spans)

    def test_fns(self) -> list[int]:
        """Indexes of `fn` tokens with a test attribute, outside templates."""
        return [
            i
            for i, t in enumerate(self.tokens)
            if t.text == "fn"
            and not self.in_template(i)
            and any(is_test_attr(a) for a in attributes(self.tokens, i))
        ]


def listed_tests(listing: Path) -> list[dict[str, Any]]:
    """libtest's `discovered` events, one per test it would run (or ignore)."""
    lines = listing.read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines if line.startswith("{")]
    return [e for e in events if e.get("type") == "test" and e.get("event") == "discovered"]


def compiled_files(package: Path, depinfo: Path) -> set[Path]:
    """The package's own source files compiled into its test targets (cargo's dep-info)."""
    files = set()
    for dep in depinfo.glob("*.d"):
        for word in re.split(r"(?<!\\)\s+", dep.read_text(encoding="utf-8")):
            # rustc runs in the package's directory: its own files are relative paths
            path = package / word.rstrip(":").replace("\\ ", " ")
            if path.suffix == ".rs" and path.is_relative_to(package) and path.is_file():
                files.add(path)
    return files


def main(src_dir: Path, meta_path: Path, out: Path, runs: list[tuple[str, Path, Path]]) -> None:
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    root = src_dir.resolve()
    sources: dict[str, Source] = {}

    def source(rel: str) -> Source:
        if rel not in sources:
            sources[rel] = Source(root / rel)
        return sources[rel]

    tests: dict[tuple[str, int], Definition] = {}
    listed_count = 0
    templated: list[str] = []
    conditional: list[str] = []
    compiled: set[str] = set()
    for package_dir, listing, depinfo in runs:
        package = (root / package_dir).resolve()
        listed = listed_tests(listing)
        listed_count += len(listed)
        for e in listed:
            rel = (package / e["source_path"]).relative_to(root).as_posix()
            src = source(rel)
            compiled.add(rel)
            name = e["name"].rsplit("::", 1)[-1]
            i = src.at.get((e["start_line"], e["start_col"]))
            if i is None:  # a column counted differently (non-ASCII text before the name)
                on_line = [j for j, t in enumerate(src.tokens) if t.line == e["start_line"]]
                i = next((j for j in on_line if src.tokens[j].text == name), None)
            if i is None or i == 0 or src.tokens[i - 1].text != "fn" or src.in_template(i):
                templated.append(e["name"])
                continue
            fn = src.tokens[i - 1]
            kind = ignore_kind(attributes(src.tokens, i - 1))
            if kind == "conditional":
                conditional.append(f"{rel}:{fn.line} {name} (libtest here: ignore={e['ignore']})")
            elif bool(e["ignore"]) != (kind is not None):
                raise SystemExit(f"{rel}:{fn.line}: libtest ignore={e['ignore']}, source {kind}")
            tests[(rel, fn.line)] = Definition(rel, fn.line, name, kind)
        compiled |= {p.relative_to(root).as_posix() for p in compiled_files(package, depinfo)}
    cfg_out: list[str] = []
    for rel in sorted(compiled):
        src = source(rel)
        for i in src.test_fns():
            fn = src.tokens[i]
            if (rel, fn.line) not in tests:
                name = src.tokens[i + 1].text
                kind = ignore_kind(attributes(src.tokens, i))
                tests[(rel, fn.line)] = Definition(rel, fn.line, name, kind)
                cfg_out.append(f"{rel}:{fn.line} {name}")
    notes = list(meta.pop("notes", []))
    notes.append(
        f"libtest lists {listed_count} tests; {len(templated)} come from macro_rules! templates"
        f" (not counted, ADR 0005){': ' + ', '.join(templated[:5]) + ', ...' if templated else ''}"
    )
    if cfg_out:
        notes.append(
            "written tests whose #[cfg] is false on this machine (not listed by libtest,"
            f" counted from the source): {', '.join(cfg_out)}"
        )
    if conditional:
        notes.append("conditional ignores, skipped under ADR 0005: " + "; ".join(conditional))
    rows = sorted(tests.values(), key=lambda d: (d.file, d.line))
    truth = {
        **meta,
        "runner_count": listed_count,
        "notes": notes,
        "tests": [
            {
                "file": d.file,
                "line": d.line,
                "name": d.name,
                "status": "skipped" if d.ignore else "active",
            }
            for d in rows
        ],
    }
    out.write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{out}: {len(rows)} tests ({listed_count} listed by libtest)")


if __name__ == "__main__":
    args = sys.argv[4:]
    triples = [(args[i], Path(args[i + 1]), Path(args[i + 2])) for i in range(0, len(args), 3)]
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), triples)
