"""Truth for C# repositories (xUnit, NUnit, MSTest): an independent line-and-brace parse.

No .NET SDK is reachable here, so no runner lists the tests. This script reads each
``.cs`` file of a test project (nearest ``*.csproj`` naming the test SDK or a
framework, or a ``Directory.Build.props`` above it that does) line by line, with
regular expressions and a brace count, not with tree-sitter: attribute blocks
(``[...]`` lines) before a method header, ``class`` headers for suites, and
ADR 0005's rules. Hand-checked on a sample per repository (bench/corpus/README.md).

    python bench/corpus/csharp/truth.py CHECKOUT NAME REPOSITORY LICENSE > truth/NAME.json
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

TOOL = (
    "bench/corpus/csharp/truth.py: an independent line-and-brace parse, no runner"
    " (bench/corpus/README.md)"
)
SIGNS = ("microsoft.net.test.sdk", "xunit", "nunit", "mstest")
STRING = re.compile(r'@"(?:[^"]|"")*"|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
CLASS = re.compile(r"\b(?:class)\s+(\w+)")
MODIFIERS = "public|private|protected|internal|static|async|virtual|override|new|unsafe"
METHOD = re.compile(rf"^\s*(?:(?:{MODIFIERS})\s+)*[\w<>\[\],.? ]+?\s+(\w+)\s*(?:<[^>]*>)?\s*\(")
RUNTIME = re.compile(
    r"^\s*(?:Xunit\.|NUnit\.Framework\.)?"
    r"(?:Assert\.(?:Ignore|Inconclusive|Skip|SkipWhen|SkipUnless)|Skip\.(?:If|IfNot))\s*\("
)
NOT_METHOD = re.compile(r"^\s*(?:if|while|for|foreach|switch|return|using|new)\b")


def test_projects(root: str, files: list[str]) -> set[str]:
    signed: set[str] = set()
    props: set[str] = set()
    projects: set[str] = set()
    for f in files:
        name = os.path.basename(f)
        if f.endswith(".csproj") or name == "Directory.Build.props":
            with open(os.path.join(root, f), encoding="utf-8", errors="replace") as file:
                content = file.read().lower()
            d = os.path.dirname(f)
            if f.endswith(".csproj"):
                projects.add(d)
            if any(s in content for s in SIGNS):
                (signed if f.endswith(".csproj") else props).add(d)
    found = set()
    for d in projects:
        up = d
        ok = d in signed
        while not ok:
            if up in props:
                ok = True
            if not up:
                break
            up = os.path.dirname(up)
        if ok:
            found.add(d)
    return found | {"\0" + d for d in projects}


def project_of(path: str, projects: set[str]) -> str | None:
    d = os.path.dirname(path)
    while "\0" + d not in projects:
        if not d:
            return None
        d = os.path.dirname(d)
    return d


def clean(line: str, in_comment: bool) -> tuple[str, bool]:
    """The line without strings and comments."""
    out = ""
    line = STRING.sub('""', line)
    i = 0
    while i < len(line):
        if in_comment:
            end = line.find("*/", i)
            if end < 0:
                return out, True
            i, in_comment = end + 2, False
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_comment, i = True, i + 2
        else:
            out += line[i]
            i += 1
    return out, in_comment


def attrs(text: str) -> dict[str, str]:
    """name -> its arguments' text, for each attribute of a ``[...]`` block."""
    found: dict[str, str] = {}
    depth, start, current = 0, 0, ""
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if (ch == "," and depth == 1) or (ch == "]" and depth == 0):
            current = text[start:i].strip(" [,\t\n")
            start = i + 1
            m = re.match(r"(?:\w+:\s*)?([\w.:]+)(?:<[^>]*>)?\s*(\(.*\))?$", current, re.S)
            if m:
                name = m.group(1).split(".")[-1].split(":")[-1]
                if name.endswith("Attribute") and name != "Attribute":
                    name = name[: -len("Attribute")]
                found[name] = found.get(name, "") + (m.group(2) or "")
    return found


def is_test(a: dict[str, str], test_class: bool) -> bool:
    return any(
        n.endswith(("Fact", "Theory"))
        or n in ("Test", "TestCase", "TestCaseSource")
        or (n.endswith("TestMethod") and test_class)
        for n in a
    )


def skipped(a: dict[str, str]) -> bool:
    if "Ignore" in a or "Explicit" in a:
        return True
    for n, args in a.items():
        if n.endswith(("Fact", "Theory")) and re.search(r"\bSkip\s*=\s*(?!null\b)", args):
            return True
        if re.search(r"\bExplicit\s*=\s*true\b", args):
            return True
    return False


# Strings that can span lines: raw (C# 11) and verbatim ones, blanked whole first.
MULTILINE = re.compile(r'\$*"""[\s\S]*?"""|\$?@\$?"(?:[^"]|"")*"')


def read_file(path: str, text: str) -> list[dict[str, object]]:
    text = MULTILINE.sub(lambda m: '""' + "\n" * m.group(0).count("\n"), text)
    lines = text.split("\n")
    tests: list[dict[str, object]] = []
    depth = 0
    in_comment = False
    pending: list[tuple[int, str]] = []  # attribute block lines
    open_attr = ""
    carry = ""
    classes: list[tuple[int, str, dict[str, str], bool]] = []  # (depth, name, attrs, abstract)
    partial_attrs: dict[str, dict[str, str]] = {}
    partial_abstract: dict[str, bool] = {}
    # first pass: class attributes merged over partial parts (by name)
    method: dict[str, object] | None = None
    method_depth = -1
    # pre-pass for partial classes' attributes
    block = ""
    for raw in lines:
        line, _ = clean(raw, False)
        s = line.strip()
        if s.startswith("["):
            block += s
        elif (header := CLASS.search(s)) is not None:
            name = header.group(1)
            merged = partial_attrs.setdefault(name, {})
            merged.update(attrs(block) if block else {})
            partial_abstract[name] = partial_abstract.get(name, False) or " abstract " in f" {s} "
            block = ""
        elif s:
            block = ""
    for number, raw in enumerate(lines, 1):
        line, in_comment = clean(raw, in_comment)
        s = line.strip()
        if s.startswith("#"):
            continue  # #if/#endif between attributes keep them
        if open_attr or (s.startswith("[") and not s.startswith("[assembly")):
            open_attr += s
            if open_attr.count("[") <= open_attr.count("]"):
                pending.append((number - open_attr.count("\n"), open_attr))
                # a method header can follow the attribute on the same line
                rest = open_attr[_end_of_attrs(open_attr) :].strip()
                open_attr = ""
                if not rest:
                    continue
                s = rest
            else:
                open_attr += "\n"
                continue
        if carry:
            s, carry = carry + " " + s, ""
        ends = s.endswith((";", "{", "}", "]"))
        if pending and s and "(" not in s and not CLASS.search(s) and not ends:
            carry = s  # a method header over several lines: its name on the next
            continue
        cm = CLASS.search(s)
        if cm and "(" not in s.split("class")[0]:
            name = cm.group(1)
            # popped when the depth comes back to the class header's
            classes.append(
                (depth, name, partial_attrs.get(name, {}), partial_abstract.get(name, False))
            )
            pending = []
        elif pending or method_depth < 0:
            mm = METHOD.match(s)
            if mm and pending and classes and not NOT_METHOD.match(s):
                a: dict[str, str] = {}
                for _, text_ in pending:
                    for k, v in attrs(text_).items():
                        a[k] = a.get(k, "") + v
                owner = classes[-1]
                if is_test(a, "TestClass" in owner[2] or owner[3]):
                    in_class = any("Ignore" in c[2] or "Explicit" in c[2] for c in classes)
                    status = "skipped" if skipped(a) or in_class else "active"
                    suite = "/".join(c[1] for c in classes)
                    line_ = pending[0][0]
                    method = {"file": path, "line": line_, "name": mm.group(1), "status": status}
                    method["suite"] = suite
                    tests.append(method)
                    method_depth = depth
            if s:
                pending = []
        if method is not None and depth == method_depth + 1 and RUNTIME.match(s):
            method["status"] = "skipped"
        depth += line.count("{") - line.count("}")
        while classes and depth <= classes[-1][0] and "}" in line:
            classes.pop()
        if method is not None and depth <= method_depth and "}" in line:
            method, method_depth = None, -1
    for t in tests:
        t.pop("suite")
    return tests


def _end_of_attrs(text: str) -> int:
    depth = 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0 and not text[i + 1 :].lstrip().startswith("["):
                return i + 1
    return len(text)


def git(root: str, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", root, *args], capture_output=True, text=True, check=True
    ).stdout


def main() -> None:
    root, name, repository, license_ = sys.argv[1:5]
    files = git(root, "ls-files").split("\n")
    skip = {"node_modules", "vendor", "dist", "build", "target", "out", "third_party", "coverage"}
    projects = test_projects(root, files)
    tests = []
    for f in sorted(files):
        if not f.endswith(".cs") or set(f.split("/")[:-1]) & skip:
            continue
        d = project_of(f, projects)
        if d is None or d not in projects:
            continue
        with open(os.path.join(root, f), encoding="utf-8-sig", errors="replace") as file:
            tests += read_file(f, file.read())
    # A depth-1 clone of a bundle has no parents to walk: the commit object alone.
    head = git(root, "rev-parse", "HEAD").strip()
    raw = git(root, "cat-file", "commit", head)
    committer = re.search(r"^committer .* (\d+) [+-]\d{4}$", raw, re.M)
    assert committer is not None, raw
    stamp = int(committer.group(1))
    commit = [head, time.strftime("%Y-%m-%d", time.gmtime(stamp))]
    print(
        json.dumps(
            {
                "name": name,
                "repository": repository,
                "commit": commit[0],
                "committed": commit[1],
                "license": license_,
                "frameworks": [],
                "tool": TOOL,
                "runner_count": None,
                "notes": [],
                "tests": tests,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
