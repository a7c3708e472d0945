"""Truth for JVM repositories no runner lists here: Kotlin (no kotlinc, no Gradle
repository) and TestNG in Java (bench/corpus/README.md).

    python bench/corpus/jvm/truth.py BUNDLE NAME REPOSITORY LICENSE [NOTE ...]

A technique of its own, sharing nothing with the analyzer's tree-sitter readers: each
file's comments are blanked and its strings masked (lengths kept, so offsets are the
source's), then every ``{`` is classified by its *header*, the text since the previous
``{``, ``}`` or ``;``: a class, a function (its annotations are in the same header), a
kotest spec's body, a kotest container or leaf call, or anything else. ADR 0005 then
applies: one entry per place a test is written. Checked by hand on a sample of files
per repository (bench/corpus/README.md).
"""

from __future__ import annotations

import json
import posixpath
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

STYLES = (
    "|".join(
        f"{style}Spec"
        for style in ("Fun", "String", "Should", "Describe", "Behavior", "Word", "Free", "Feature")
    )
    + "|ExpectSpec"
)
CONTAINERS = {"context", "describe", "given", "when", "and", "feature"}  # any case
LEAVES = {"test", "it", "should", "then", "scenario", "expect"}
SKIP_DIRS = {"build", "target", "out", "vendor", "node_modules", "dist", ".git", "third_party"}
DATA = {"withData", "withTests", "withContexts"}
TEST_ANNOTATIONS = {"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate"}
CONFIG = {
    f"{a}{b}" for a in ("Before", "After") for b in ("Method", "Class", "Test", "Suite", "Groups")
}
CONFIG |= {"DataProvider", "Factory"}
CLASS = re.compile(r"\b(?:class|object|interface|enum)\s+(\w+)")
KT_FUN = re.compile(r"\bfun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?(`[^`]+`|\w+)\s*\(")
JAVA_METHOD = re.compile(r"(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*(?:throws\s+[\w.,\s]+)?$")
ANNOTATION = re.compile(r"@(?:\w+:)?([\w.]+)(\s*\((?:[^()]|\([^()]*\))*\))?")
DSL_CALL = re.compile(
    r"^(`?\w+`?)\s*(?:<[^>]*>)?\s*\(\s*(\"(?:[^\"\\]|\\.)*\"|[^,()\s][^,()]*(?:\([^()]*\))?)?"
)
STRING_CALL = re.compile(r'^("(?:[^"\\]|\\.)*")\s*(?:\.config\((.*)\))?\s*$', re.S)
FACTORY = re.compile(
    r"\b(?:" + "|".join(s[0].lower() + s[1:] for s in STYLES.split("|")) + r")\s*$"
)
BACKTICKED = re.compile(r"`[^`\n]*`")
RETURNS = re.compile(r"\s*(?:\([^()]*(?:\([^()]*\)[^()]*)*\))?\s*:\s*(\w+)")
NOT_A_METHOD = re.compile(
    r"\b(new|class|interface|enum|if|for|while|switch|catch|synchronized|return|else|try|do)\b"
    r"|=|->"
)
CONFIG_DISABLES = r"\benabled\s*=\s*false\b|^\s*false\s*(?:,|$)"
INFIX = re.compile(r'^("(?:[^"\\]|\\.)*")\s+(should|When|`when`|-)\s*$')


def mask(source: str) -> str:
    """Comments blanked, string and char contents replaced by ``x``; newlines kept."""
    out, i, n = list(source), 0, len(source)
    while i < n:
        if source.startswith("//", i):
            j = source.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = [c if c == "\n" else " " for c in source[i:j]]
            i = j
        elif source.startswith('"""', i):
            j = source.find('"""', i + 3)
            j = n if j < 0 else j + 3
            out[i + 3 : j - 3] = [c if c == "\n" else "x" for c in source[i + 3 : j - 3]]
            i = j
        elif source[i] in "\"'":
            quote, j = source[i], i + 1
            while j < n and source[j] != quote and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            out[i + 1 : j] = "x" * (j - i - 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def last_statement(header: str) -> tuple[int, str]:
    """The offset and text of the header's last logical line (parentheses balanced)."""
    lines = header.rstrip().split("\n")
    k = len(lines) - 1
    while k > 0 and sum(line.count("(") - line.count(")") for line in lines[k:]) < 0:
        k -= 1
    offset = sum(len(line) + 1 for line in lines[:k])
    text = "\n".join(lines[k:])
    return offset + len(text) - len(text.lstrip()), text.strip()


def status_of(annotations: dict[str, str], of_class: bool = False) -> str:
    if any(a in ("Ignore", "Ignored") or a.startswith("Disabled") for a in annotations):
        return "skipped"
    if not of_class and re.search(r"\benabled\s*=\s*false\b", annotations.get("Test", "")):
        return "skipped"
    return "active"


def annotations_in(text: str) -> dict[str, str]:
    return {m.group(1).split(".")[-1]: m.group(2) or "" for m in ANNOTATION.finditer(text)}


Test = dict[str, object]


@dataclass
class Scope:
    """What a ``{`` opened: ``kind`` is file, class, specclass (a spec with a class body),
    spec (where a spec registers tests), container, data, fun or other."""

    kind: str
    name: str = ""
    status: str = "active"
    annotations: dict[str, str] = field(default_factory=dict)
    line: int = 0
    count: int = 0  # tests found when a ``data`` scope opened


class FileWalk:
    """One file's tests, found by classifying each ``{`` by its header."""

    def __init__(self, path: str, source: str, kotlin: bool) -> None:
        self.path, self.source, self.kotlin = path, source, kotlin
        self.tests: list[Test] = []
        self.stack = [Scope("file")]
        self.masked = ""

    def run(self) -> list[Test]:
        masked = self.masked = mask(self.source)
        start = 0
        for index, char in enumerate(masked):
            if char in ";}":
                if self.kotlin:  # functions with expression bodies end without a brace
                    self.record(masked[start:index], start)
                if char == "}" and len(self.stack) > 1:
                    self.close(self.stack.pop())
                start = index + 1
            elif char == "{":
                self.stack.append(self.classify(masked[start:index], start))
                start = index + 1
        return self.tests

    def line_of(self, offset: int) -> int:
        return self.source.count("\n", 0, offset) + 1

    def inherited(self) -> str:
        return "skipped" if any(s.status == "skipped" for s in self.stack) else "active"

    def add(self, line: int, name: str, status: str) -> None:
        self.tests.append({"file": self.path, "line": line, "name": name, "status": status})

    def close(self, scope: Scope) -> None:
        if scope.kind == "data" and len(self.tests) == scope.count:
            self.add(scope.line, scope.name, scope.status)  # withData without tests in it

    def classify(self, header: str, at: int) -> Scope:
        kinds = {s.kind for s in self.stack}
        if self.kotlin and FACTORY.search(header):  # val shared = funSpec { ... }
            return Scope("spec", "factory", self.inherited())
        if self.kotlin and "spec" in kinds and "fun" not in kinds:
            found = self.dsl(header, at)
            if found is not None:
                return found
        declared = self.declared_class(header)
        if declared is not None:
            return declared
        if self.stack[-1].kind == "specclass" and re.search(r"\binit\s*$", header):
            return Scope("spec", self.stack[-1].name, self.stack[-1].status)
        return Scope("fun") if self.record(header, at) else Scope("other")

    def declared_class(self, header: str) -> Scope | None:
        # Not the words of a backticked name (`templates in class delegation blocks`).
        classes = list(CLASS.finditer(BACKTICKED.sub(lambda m: "x" * len(m[0]), header)))
        funs = list(KT_FUN.finditer(header)) if self.kotlin else []
        if not classes or (funs and funs[-1].start() > classes[-1].start()):
            return None  # no class, or one declared without a body before a function
        if re.search(r"\binit\s*$", header):
            return None
        before = header[: classes[-1].start()]
        name, anns = classes[-1].group(1), annotations_in(before)
        style = rf":\s*(?:[\w.]+\.)?(?:{STYLES})\s*\("
        if self.kotlin and not re.search(r"\babstract\b", before):
            if re.search(style + "$", header.rstrip()):
                return Scope("spec", name, status_of(anns, True))
            if re.search(style + r"\s*\)", header):
                return Scope("specclass", name, status_of(anns, True), anns)
        return Scope("class", name, status_of(anns, True), anns)

    def record(self, header: str, at: int) -> bool:
        """Add the tests among the functions declared in ``header``; whether it has any."""
        owner = self.stack[-1]
        if owner.kind not in ("class", "specclass"):
            return False
        found = functions(header, self.kotlin)
        for name, anns, offset, public in found:
            by_class = public and "Test" in owner.annotations and not anns.keys() & CONFIG
            is_test = bool(anns.keys() & TEST_ANNOTATIONS) or any(
                a.endswith("Test") and a not in ("BeforeTest", "AfterTest") for a in anns
            )
            if is_test or by_class:
                skipped = "skipped" in (self.inherited(), status_of(anns))
                self.add(self.line_of(at + offset), name, "skipped" if skipped else "active")
        return bool(found)

    def dsl(self, header: str, at: int) -> Scope | None:
        """The kotest container, leaf or data call that ``header`` ends with, if any."""
        offset, statement = last_statement(header)
        if statement.count("(") < statement.count(")"):  # withData(nameFn = { }, ...) { }
            begin = opening_line(self.masked, at + len(header.rstrip()) - 1)
            offset, statement = begin - at, self.masked[begin : at + len(header)].strip()
        original = self.source[at + offset : at + offset + len(statement)]
        line, inherited = self.line_of(at + offset), self.inherited()
        infix = INFIX.match(original)
        if infix:
            return Scope("container", infix.group(1)[1:-1], inherited)
        called = dsl_call(original)
        if called is None:
            return None
        function, name, config = called
        disabled = (function.startswith("x") and function not in DATA) or name.startswith("!")
        disabled = disabled or re.search(CONFIG_DISABLES, config) is not None
        focused = name.startswith("f:")
        status = "skipped" if disabled or inherited == "skipped" else "active"
        status = "focused" if focused and status == "active" else status
        if function in DATA:
            return Scope("data", name, status, line=line, count=len(self.tests))
        if function.removeprefix("x").lower() in CONTAINERS:
            return Scope("container", name, status)
        self.add(line, name, status)
        return Scope("fun")


def opening_line(masked: str, closing: int) -> int:
    """The first non-blank offset of the line holding the ``(`` that the ``)`` at
    ``closing`` closes."""
    depth = 0
    for index in range(closing, -1, -1):
        depth += {")": 1, "(": -1}.get(masked[index], 0)
        if depth == 0:
            start = masked.rfind("\n", 0, index) + 1
            return start + len(masked[start:index]) - len(masked[start:index].lstrip())
    return closing


def dsl_call(statement: str) -> tuple[str, str, str] | None:
    """``(function, name, config arguments)`` of a kotest call (function "" for a string
    invoked), or None."""
    string_call = STRING_CALL.match(statement)
    if string_call:
        return "", string_call.group(1)[1:-1], string_call.group(2) or ""
    core, config = statement, ""
    configured = re.search(r"\)\s*\.config\s*\((.*)\)\s*$", statement, re.S)
    if configured:
        core, config = statement[: configured.start() + 1], configured.group(1)
    call = DSL_CALL.match(core)
    if call is None:
        return None
    function = call.group(1).strip("`")
    if function in DATA:
        return function, function, config
    known = function.removeprefix("x").lower() in CONTAINERS | LEAVES
    if not known or call.group(2) is None:
        return None
    argument = call.group(2).strip()
    return function, argument[1:-1] if argument.startswith('"') else argument, config


def functions(header: str, kotlin: bool) -> list[tuple[str, dict[str, str], int, bool]]:
    """The functions declared in ``header``: (name, annotations, offset of the first
    annotation or of the declaration's line, whether TestNG's class-level ``@Test``
    takes it: public and returning nothing)."""
    return kotlin_functions(header) if kotlin else java_method(header)


def kotlin_functions(header: str) -> list[tuple[str, dict[str, str], int, bool]]:
    found = []
    previous = 0
    for match in KT_FUN.finditer(header):
        segment = header[previous : match.start()]
        first = segment.find("@")
        offset = previous + first if first >= 0 else header.rfind("\n", 0, match.start()) + 1
        offset += len(header[offset:]) - len(header[offset:].lstrip())
        words = ANNOTATION.sub(" ", segment)
        public = not re.search(r"\b(private|protected)\s+(?:\w+\s+)*$", words)
        returns = RETURNS.match(header[match.end() - 1 :])
        public = public and (returns is None or returns.group(1) == "Unit")
        found.append((match.group(1).strip("`"), annotations_in(segment), offset, public))
        previous = match.end()
    return found


def java_method(header: str) -> list[tuple[str, dict[str, str], int, bool]]:
    body = header.rstrip()
    match = JAVA_METHOD.search(body)
    if match is None:
        return []
    segment = body[: match.start()]
    if NOT_A_METHOD.search(ANNOTATION.sub(" ", segment) + match.group(1)):
        return []
    first = segment.find("@")
    offset = first if first >= 0 else len(segment) - len(segment.lstrip())
    words = set(ANNOTATION.sub(" ", segment).split())
    public = "public" in words and "void" in words
    return [(match.group(1), annotations_in(segment), offset, public)]


def is_test_source(path: str) -> bool:
    parts = path.split("/")
    sets = [parts[i + 1] for i in range(len(parts) - 2) if parts[i] == "src"]
    if any(s == "main" or s.endswith("Main") for s in sets):
        return False
    stem = posixpath.splitext(parts[-1])[0]
    return (
        stem.endswith(("Test", "Tests"))
        or stem.startswith("Test")
        or bool({"test", "tests"} & set(parts[:-1]))
        or any(s.endswith("Test") for s in sets)
    )


def git(*arguments: str) -> str:
    return subprocess.run(["git", *arguments], capture_output=True, text=True, check=True).stdout


def main() -> None:
    bundle, name, repository, license_, *notes = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        git("clone", "-q", "--bare", bundle, f"{tmp}/r.git")
        head = git("-C", f"{tmp}/r.git", "rev-parse", "HEAD")
        Path(f"{tmp}/r.git/shallow").write_text(head)  # the bundle has no parents
        commit, committed = git("-C", f"{tmp}/r.git", "log", "-1", "--format=%H %cs").split()
        Path(f"{tmp}/src").mkdir()
        archive = subprocess.run(
            ["git", "-C", f"{tmp}/r.git", "archive", "HEAD"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", f"{tmp}/src"], input=archive, check=True)
        tests: list[Test] = []
        frameworks: set[str] = set()
        for file in sorted(Path(f"{tmp}/src").rglob("*")):
            rel = file.relative_to(f"{tmp}/src").as_posix()
            if (
                file.suffix not in (".kt", ".java")
                or SKIP_DIRS & set(rel.split("/")[:-1])
                or not is_test_source(rel)
            ):
                continue
            source = file.read_text("utf-8", "replace")
            framework = framework_of(source)
            if framework is None:
                continue
            found = FileWalk(rel, source, file.suffix == ".kt").run()
            if found:
                frameworks.add(framework)
            tests.extend(found)
    truth = {
        "name": name,
        "repository": repository,
        "commit": commit,
        "committed": committed,
        "license": license_,
        "frameworks": sorted(frameworks),
        "tool": "bench/corpus/jvm/truth.py: an independent brace-and-header parse, no runner "
        "(bench/corpus/README.md)",
        "runner_count": None,
        "notes": notes,
    }
    lines = json.dumps(truth, indent=2).rstrip("}\n").rstrip() + ',\n  "tests": [\n'
    lines += ",\n".join("    " + json.dumps(t) for t in tests) + "\n  ]\n}\n"
    out = Path(__file__).resolve().parents[3] / "tests/fixtures/corpus/truth" / f"{name}.json"
    out.write_text(lines)
    print(f"{out}: {len(tests)} tests", file=sys.stderr)


IMPORTS = [("kotest", "io.kotest"), ("testng", "org.testng"), ("junit5", "org.junit.jupiter")]
IMPORTS += [("junit4", "org.junit"), ("junit4", "junit.framework"), ("kotlin-test", "kotlin.test")]


def framework_of(source: str) -> str | None:
    imports = re.findall(r"^\s*import\s+(?:static\s+)?([\w.]+)", source, re.M)
    return next(
        (f for f, p in IMPORTS if any(i == p or i.startswith(p + ".") for i in imports)), None
    )


if __name__ == "__main__":
    main()
