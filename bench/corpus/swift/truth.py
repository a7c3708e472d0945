"""Truth for the Swift corpus repositories (XCTest, Swift Testing) without a Swift
toolchain: an independent character-level parse (comments and strings blanked, braces
matched), not tree-sitter, applying ADR 0005's Swift rules; checked by hand on a sample.

    python bench/corpus/swift/truth.py BUNDLE NAME REPOSITORY LICENSE > truth/NAME.json
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from typing import Any

SKIPPED = {".git", "node_modules", "vendor", "dist", "build", "target", "out", "third_party"}
TYPE = re.compile(r"\b(class|struct|enum|actor|extension|protocol)\s+([A-Za-z_][\w.]*)")
FUNC = re.compile(r"\bfunc\s+(`[^`]+`|[A-Za-z_]\w*)")
SKIP = re.compile(r"(?:^|[\n;])\s*(?:throw\s+XCTSkip\b|try\s+XCTSkip(?:If|Unless)\b)")
KNOWN = re.compile(r"(?:^|[\n;])\s*(?:try\s+)?(?:await\s+)?withKnownIssue\b")
KEYWORDS = {
    "public",
    "open",
    "internal",
    "private",
    "fileprivate",
    "final",
    "static",
    "class",
    "override",
    "nonisolated",
    "mutating",
    "required",
    "convenience",
    "dynamic",
    "indirect",
    "package",
}


def blank(source: str) -> str:
    """Comments and string contents replaced by spaces, newlines kept."""
    out = list(source)
    i, n = 0, len(source)
    depth = 0
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            while i < n and source[i] != "\n":
                out[i] = " "
                i += 1
        elif source.startswith("/*", i):
            depth = 0
            while i < n:
                if source.startswith("/*", i):
                    depth += 1
                    out[i] = out[i + 1] = " "
                    i += 2
                elif source.startswith("*/", i):
                    depth -= 1
                    out[i] = out[i + 1] = " "
                    i += 2
                    if depth == 0:
                        break
                else:
                    if source[i] != "\n":
                        out[i] = " "
                    i += 1
        elif c == '"' or (c == "#" and re.match(r'#+"', source[i:])):
            hashes = len(source[i:]) - len(source[i:].lstrip("#"))
            start = i + hashes
            triple = source.startswith('"""', start)
            close = ('"""' if triple else '"') + "#" * hashes
            j = start + (3 if triple else 1)
            while j < n and not source.startswith(close, j):
                if source[j] == "\\" and not hashes:
                    if source.startswith("\\(", j):  # interpolation: skip to its close
                        level, j = 0, j + 1
                        while j < n:
                            level += {"(": 1, ")": -1}.get(source[j], 0)
                            if source[j] != "\n":
                                out[j] = " "
                            j += 1
                            if level == 0:
                                break
                        continue
                    out[j] = " "
                    j += 1
                if j < n and source[j] != "\n":
                    out[j] = " "
                j += 1
            i = j + len(close)
        else:
            i += 1
    return "".join(out)


def base(text: str, end: int) -> str:
    """The first type a declaration inherits from ("" if none)."""
    found = re.match(r"\s*:\s*([\w.]+)", text[end:])
    return found.group(1) if found else ""


def matching(text: str, i: int, open_: str, close: str) -> int:
    level = 0
    for j in range(i, len(text)):
        if text[j] == open_:
            level += 1
        elif text[j] == close:
            level -= 1
            if level == 0:
                return j
    return len(text)


def declarations(text: str) -> list[dict[str, Any]]:
    """Types and functions with their brace spans, owners and attributes."""
    found: list[dict[str, Any]] = []
    for kind, regex in (("type", TYPE), ("func", FUNC)):
        for m in regex.finditer(text):
            if (
                kind == "type"
                and m.group(1) == "class"
                and re.match(r"\s*(func|var|let)\b", text[m.end(2) :])
            ):
                continue
            if kind == "type" and m.group(1) == "class" and m.group(2) in ("func", "var", "let"):
                continue
            head_end = text.find("{", m.end())
            if head_end < 0:
                continue
            if kind == "func":
                paren = text.find("(", m.end())
                params_end = matching(text, paren, "(", ")")
                params = text[paren + 1 : params_end].strip()
                head_end = text.find("{", params_end)
                between = text[params_end + 1 : head_end]
                if "\n" in between.strip() and "{" not in between and between.count("\n") > 3:
                    continue  # a protocol requirement without a body
                result = "->" in between
            else:
                params, result = "", False
            start = attributes_start(text, m.start())
            found.append(
                {
                    "kind": kind,
                    "what": m.group(1) if kind == "type" else "func",
                    "name": m.group(2) if kind == "type" else m.group(1).strip("`"),
                    "start": start,
                    "at": m.start(),
                    "attrs": text[start : m.start()],
                    "open": head_end,
                    "close": matching(text, head_end, "{", "}"),
                    "params": params,
                    "result": result,
                    "base": base(text, m.end()) if kind == "type" else "",
                }
            )
    found.sort(key=lambda d: d["open"])
    # the innermost enclosing declaration of each
    for d in found:
        owners = [
            o for o in found if o["open"] < d["at"] and d["close"] <= o["close"] and o is not d
        ]
        d["owner"] = max(owners, key=lambda o: o["open"]) if owners else None
    return found


def attributes_start(text: str, at: int) -> int:
    """Where the attributes and modifiers before a declaration begin: a walk back over
    keywords and ``@Name(…)`` with balanced parentheses at any depth."""
    i = at
    while True:
        j = i
        while j > 0 and text[j - 1].isspace():
            j -= 1
        if j > 0 and text[j - 1] == ")":
            level, k = 0, j - 1
            while k >= 0:
                level += {")": 1, "(": -1}.get(text[k], 0)
                if level == 0:
                    break
                k -= 1
            word = re.search(r"@[\w.]+\s*$", text[:k])
            if word is None:
                return i
            i = word.start()
            continue
        word = re.search(r"(@[\w.]+|\b[a-z]+)$", text[:j])
        if word is None or not (word.group(0).startswith("@") or word.group(0) in KEYWORDS):
            return i
        i = word.start()


def depth_one(body: str) -> str:
    out, level = [], 0
    for c in body:
        if c == "{":
            level += 1
            out.append(c if level == 1 else " ")
        elif c == "}":
            out.append(c if level == 1 else " ")
            level -= 1
        else:
            out.append(c if level == 1 or c == "\n" else " ")
    return "".join(out)


def file_tests(path: str, source: str) -> tuple[str | None, list[dict[str, Any]]]:
    text = blank(source)
    imports = set(
        re.findall(
            r"^[ \t]*(?:@\w+[ \t]+)?import[ \t]+"
            r"(?:(?:struct|class|enum|protocol|func|var|let|typealias)[ \t]+)?([\w.]+)",
            text,
            re.M,
        )
    )
    decls = declarations(text)
    types = [d for d in decls if d["kind"] == "type"]
    xc = "XCTest" in imports or any(t["base"] == "XCTestCase" for t in types)
    testing = "Testing" in imports or "@Test" in text or "@Suite" in text
    framework = (
        "swift-testing"
        if "Testing" in imports
        else "xctest"
        if "XCTest" in imports
        else (
            "xctest"
            if xc
            else "swift-testing"
            if testing and re.search(r"@(Test|Suite)\b", text)
            else None
        )
    )
    if framework is None:
        return None, []
    known: set[str] = set()
    grew = True
    while grew:
        grew = False
        for t in types:
            if (
                t["what"] == "class"
                and t["name"] not in known
                and (
                    t["base"].split(".")[-1] == "XCTestCase"
                    or t["base"].endswith("TestCase")
                    or t["base"].split(".")[-1] in known
                )
            ):
                known.add(t["name"])
                grew = True
    tests = []
    for d in decls:
        if d["kind"] != "func":
            continue
        owner = d["owner"]
        if owner is not None and owner["kind"] != "type":
            continue
        body = depth_one(text[d["open"] : d["close"] + 1])
        line = source.count("\n", 0, d["start"]) + 1
        if re.search(r"@(Testing\.)?Test\b", d["attrs"]):
            status = "active"
            if re.search(r"\.(disabled|enabled)\s*\(", d["attrs"]):
                status = "skipped"
            o = owner
            while o is not None:
                if re.search(r"@(Testing\.)?Suite\b[^@]*\.(disabled|enabled)\s*\(", o["attrs"]):
                    status = "skipped"
                o = o["owner"]
            if status == "active" and KNOWN.search(body):
                status = "xfail"
            tests.append({"file": path, "line": line, "name": d["name"], "status": status})
            continue
        if owner is None or not d["name"].startswith("test") or d["params"] or d["result"]:
            continue
        if re.search(r"\b(private|fileprivate|static|class)\b", d["attrs"]):
            continue
        is_class = owner["what"] == "class" and owner["name"] in known
        extended = owner["name"].split(".")[-1]
        is_ext = owner["what"] == "extension" and (
            extended in known or ("XCTest" in imports and extended.endswith(("TestCase", "Tests")))
        )
        if is_class or is_ext:
            status = "skipped" if SKIP.search(body) else "active"
            tests.append({"file": path, "line": line, "name": d["name"], "status": status})
    return framework, tests


def main() -> None:
    bundle, name, repository, license_ = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            ["git", "-c", "advice.detachedHead=false", "clone", "-q", bundle, tmp + "/r"],
            check=True,
        )

        def run(*arguments: str) -> str:
            command = ["git", "-C", tmp + "/r", *arguments]
            return subprocess.run(command, capture_output=True, text=True, check=True).stdout

        commit = run("rev-parse", "HEAD").strip()  # a depth-1 bundle: no parents to walk
        stamp = re.search(
            r"^committer .* (\d+) [-+]\d{4}$", run("cat-file", "commit", commit), re.M
        )
        assert stamp is not None, "a commit has a committer"
        committed = time.strftime("%Y-%m-%d", time.gmtime(int(stamp.group(1))))
        paths = run("ls-tree", "-r", "--name-only", "HEAD").splitlines()
        packages = {
            p.rsplit("/", 1)[0] if "/" in p else ""
            for p in paths
            if p.split("/")[-1] == "Package.swift"
        }
        tests, frameworks = [], set()
        for path in paths:
            if not path.endswith(".swift") or set(path.split("/")[:-1]) & SKIPPED:
                continue
            selected = path.endswith("Tests.swift") or any(
                path.startswith((pkg + "/" if pkg else "") + "Tests/") for pkg in packages
            )
            if not selected:
                continue
            with open(f"{tmp}/r/{path}", encoding="utf-8", errors="replace") as file:
                source = file.read()
            framework, found = file_tests(path, source)
            if found:
                frameworks.add(framework)
                tests.extend(found)
    json.dump(
        {
            "name": name,
            "repository": repository,
            "commit": commit,
            "committed": committed,
            "license": license_,
            "frameworks": sorted(frameworks),
            "tool": "bench/corpus/swift/truth.py: an independent character-level parse"
            " (no Swift toolchain here), hand-checked on a sample",
            "runner_count": len(tests),
            "notes": [],
            "tests": tests,
        },
        sys.stdout,
        indent=1,
    )


if __name__ == "__main__":
    main()
