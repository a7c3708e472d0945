"""C#: xUnit, NUnit and MSTest in test projects (issue 41, ADR 0004/0005), and what is
NOT a test (a method of a non-test class, a project that is no test project)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from clonegate._adapters.analysis.config import ConfigScopes
from clonegate._adapters.analysis.scan import analyze_file, scan_commit
from clonegate._adapters.analysis.unread import MAX_PROJECT_BYTES
from clonegate._domain.inventory import TestSuite

from .support.repos import make_repo
from .support.scans import grammars_built

TEST_PROJECT = b'<Project Sdk="Microsoft.NET.Sdk"><ItemGroup>\
<PackageReference Include="xunit" Version="2.9.0" /></ItemGroup></Project>'
LIBRARY = b'<Project Sdk="Microsoft.NET.Sdk"><PropertyGroup /></Project>'
PROJECTS = {"tests/Foo.Tests/Foo.Tests.csproj": TEST_PROJECT, "src/Foo/Foo.csproj": LIBRARY}
SCOPES = ConfigScopes(PROJECTS, PROJECTS.__getitem__)
PATH = "tests/Foo.Tests/ParserTests.cs"


def outline(path: str, source: str, scopes: ConfigScopes = SCOPES) -> tuple[str, list[str]]:
    """The file's framework and its tests as ``suite/…/name status``."""
    result = analyze_file(path, textwrap.dedent(source).encode(), scopes)
    if result is None:
        return "", []
    out: list[str] = []

    def walk(prefix: str, suites: tuple[TestSuite, ...]) -> None:
        for suite in suites:
            out.extend(f"{prefix}{suite.name}/{t.name} {t.status.value}" for t in suite.tests)
            walk(f"{prefix}{suite.name}/", suite.suites)

    walk("", result.suites)
    return result.framework, out


XUNIT = [
    (
        "Fact and Theory, once whatever its InlineData rows",
        """
        using Xunit;
        public class ParserTests {
            [Fact] public void Parses() { }
            [Theory]
            [InlineData(1)]
            [InlineData(2)]
            public void Rows(int x) { }
            public void Helper() { }
        }
        """,
        ["ParserTests/Parses active", "ParserTests/Rows active"],
    ),
    (
        "Skip = on Fact or Theory; Skip = null is not a skip",
        """
        using Xunit;
        public class ParserTests {
            [Fact(Skip = "flaky")] public void A() { }
            [Theory(Skip = "later"), InlineData(1)] public void B(int x) { }
            [Fact(Skip = null)] public void C() { }
            [Fact(DisplayName = "d")] public void D() { }
        }
        """,
        [
            "ParserTests/A skipped",
            "ParserTests/B skipped",
            "ParserTests/C active",
            "ParserTests/D active",
        ],
    ),
    (
        "qualified and Attribute-suffixed names, extensions named *Fact",
        """
        public class ParserTests {
            [Xunit.FactAttribute] public void A() { }
            [SkippableFact] public void B() { Skip.If(true); }
            [WpfTheory] public void C() { if (x) { Skip.If(true); } }
        }
        """,
        ["ParserTests/A active", "ParserTests/B skipped", "ParserTests/C active"],
    ),
    (
        "nested classes are suites; partial parts are one suite",
        """
        using Xunit;
        public partial class ParserTests {
            [Fact] public void A() { }
            public class Nested { [Fact] public void B() { } }
        }
        public partial class ParserTests {
            [Fact] public void C() { }
        }
        """,
        ["ParserTests/A active", "ParserTests/C active", "ParserTests/Nested/B active"],
    ),
    (
        "a local function, a struct's and an interface's methods are no tests",
        """
        using Xunit;
        public interface IContract { [Fact] void A(); }
        public struct S { [Fact] public void B() { } }
        public class ParserTests {
            [Fact] public void C() { [Fact] void Local() { } }
        }
        """,
        ["ParserTests/C active"],
    ),
]

NUNIT = [
    (
        "Test, TestCase rows once, TestCaseSource, Theory",
        """
        using NUnit.Framework;
        [TestFixture]
        public class ParserTests {
            [Test] public void A() { }
            [TestCase(1)]
            [TestCase(2)]
            public void B(int x) { }
            [TestCaseSource(nameof(Cases))] public void C(int x) { }
            [Theory] public void D(int x) { }
            [SetUp] public void Before() { }
        }
        """,
        [
            "ParserTests/A active",
            "ParserTests/B active",
            "ParserTests/C active",
            "ParserTests/D active",
        ],
    ),
    (
        "Ignore and Explicit on a method or a class; Assert.Ignore() top-level",
        """
        using NUnit.Framework;
        public class ParserTests {
            [Test, Ignore("later")] public void A() { }
            [Test, Explicit] public void B() { }
            [Test] public void C() { Assert.Ignore("x"); }
            [Test] public void D() { if (slow) Assert.Ignore("x"); }
            [Ignore("broken"), TestFixture]
            public class Off { [Test] public void E() { } }
        }
        """,
        [
            "ParserTests/A skipped",
            "ParserTests/B skipped",
            "ParserTests/C skipped",
            "ParserTests/D active",
            "ParserTests/Off/E skipped",
        ],
    ),
    (
        "a parameterised TestFixture counts its tests once",
        """
        using NUnit.Framework;
        [TestFixture(1)]
        [TestFixture(2)]
        public class ParserTests {
            [Test] public void A() { }
        }
        """,
        ["ParserTests/A active"],
    ),
]

MSTEST = [
    (
        "TestMethod in a TestClass, DataRow once, Ignore",
        """
        using Microsoft.VisualStudio.TestTools.UnitTesting;
        [TestClass]
        public class ParserTests {
            [TestMethod] public void A() { }
            [DataTestMethod]
            [DataRow(1)]
            [DataRow(2)]
            public void B(int x) { }
            [TestMethod, Ignore] public void C() { }
            [TestMethod] public void D() { Assert.Inconclusive(); }
            [TestInitialize] public void Before() { }
        }
        """,
        [
            "ParserTests/A active",
            "ParserTests/B active",
            "ParserTests/C skipped",
            "ParserTests/D skipped",
        ],
    ),
    (
        "no TestMethod outside a TestClass, but in an abstract base; partial's attribute",
        """
        using Microsoft.VisualStudio.TestTools.UnitTesting;
        public class Plain { [TestMethod] public void A() { } }
        public abstract class Base { [TestMethod] public void B() { } }
        public partial class ParserTests { [TestMethod] public void C() { } }
        [TestClass, Ignore] public partial class ParserTests { }
        """,
        ["Base/B active", "ParserTests/C skipped"],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), XUNIT, ids=[c[0] for c in XUNIT])
def test_xunit(case: str, source: str, expected: list[str]) -> None:
    assert outline(PATH, source) == ("xunit", expected)


@pytest.mark.parametrize(("case", "source", "expected"), NUNIT, ids=[c[0] for c in NUNIT])
def test_nunit(case: str, source: str, expected: list[str]) -> None:
    assert outline(PATH, source) == ("nunit", expected)


@pytest.mark.parametrize(("case", "source", "expected"), MSTEST, ids=[c[0] for c in MSTEST])
def test_mstest(case: str, source: str, expected: list[str]) -> None:
    assert outline(PATH, source) == ("mstest", expected)


FACT = "using Xunit; public class ATests { [Fact] public void A() { } }"

# Which framework a file is, by its using or by its attributes alone (global usings).
CHOICES = [
    ("by its attributes, no using", FACT.removeprefix("using Xunit;"), "xunit"),
    (
        "NUnit's Theory with its using",
        "using NUnit.Framework; class A { [Theory] void T() {} }",
        "nunit",
    ),
    (
        "NUnit's Theory beside its Test",
        "class A { [Theory] void T() {} [Test] void U() {} }",
        "nunit",
    ),
    ("xUnit's Theory", "class A { [Theory] void T() {} }", "xunit"),
    ("MSTest by its attributes", "[TestClass] class A { [TestMethod] void T() {} }", "mstest"),
    ("a helper that uses Xunit: no test", "using Xunit; class A { void T() {} }", ""),
    ("a file of a test project with no test", "class A { void T() {} }", ""),
]


@pytest.mark.parametrize(("case", "source", "framework"), CHOICES, ids=[c[0] for c in CHOICES])
def test_the_framework_of_a_file(case: str, source: str, framework: str) -> None:
    assert outline(PATH, source)[0] == framework


BUILD_PROPS = b"<Project><ItemGroup><PackageReference Include='NUnit' /></ItemGroup></Project>"

# Which files are test sources: those of a test project only (the nearest *.csproj).
SELECTION = [
    ("a file of the test project", PROJECTS, "tests/Foo.Tests/Sub/A.cs", "xunit"),
    ("a library's file, whatever its name", PROJECTS, "src/Foo/FooTests.cs", ""),
    ("no project above", PROJECTS, "tools/ATests.cs", ""),
    (
        "the nearest project decides",
        {"Root.Tests.csproj": TEST_PROJECT, "src/Foo/Foo.csproj": LIBRARY},
        "src/Foo/ATests.cs",
        "",
    ),
    (
        "a Directory.Build.props naming a framework makes projects below test projects",
        {"tests/Directory.Build.props": BUILD_PROPS, "tests/A.Tests/A.Tests.csproj": LIBRARY},
        "tests/A.Tests/ATests.cs",
        "xunit",
    ),
    (
        "but not the projects beside it",
        {"tests/Directory.Build.props": BUILD_PROPS, "src/A/A.csproj": LIBRARY},
        "src/A/ATests.cs",
        "",
    ),
]


@pytest.mark.parametrize(
    ("case", "projects", "path", "framework"), SELECTION, ids=[c[0] for c in SELECTION]
)
def test_the_files_of_test_projects(
    case: str, projects: dict[str, bytes], path: str, framework: str
) -> None:
    scopes = ConfigScopes([*projects, path], projects.__getitem__)
    assert outline(path, FACT, scopes)[0] == framework


def test_a_project_file_that_cannot_be_read_is_named_and_selects_nothing() -> None:
    def read(path: str) -> bytes:
        raise OSError("corrupt object")

    scopes = ConfigScopes(["A.Tests/A.Tests.csproj", "A.Tests/ATests.cs"], read)
    assert outline("A.Tests/ATests.cs", FACT, scopes) == ("", [])
    assert [(e.path, e.phase) for e in scopes.errors] == [("A.Tests/A.Tests.csproj", "read")]


# tree-sitter-c-sharp 0.23.5 fails on each of these: the file is read again with its
# preprocessor lines and interpolated verbatim strings blanked in place.
GRAMMAR_GAPS = [
    (
        "#if around a field's attributes (castle-core)",
        """
        using NUnit.Framework;
        public class ParserTests {
        #if FEATURE_SERIALIZATION
            [NonSerialized]
            [XmlIgnore]
        #endif
            public int target;
            [TestCase(1)]
            [TestCase(2)]
            public void A(int x) { }
        }
        """,
        ["ParserTests/A active"],
    ),
    (
        "an interpolated verbatim string ending in a doubled quote (component-detection)",
        '''
        #nullable disable
        namespace Foo.Tests;
        using Xunit;
        public class ParserTests {
            [Fact] public void A() { }
            private void Json(StringBuilder b, Item x) {
                b.Append($@"  ""{x.Name}"": ""{x.Version}""");
            }
            [Fact(Skip = "later")] public void B() { }
        }
        ''',
        ["ParserTests/A active", "ParserTests/B skipped"],
    ),
]


@pytest.mark.parametrize(
    ("case", "source", "expected"), GRAMMAR_GAPS, ids=[c[0] for c in GRAMMAR_GAPS]
)
def test_a_file_the_grammar_fails_on_is_read_without_its_directives(
    case: str, source: str, expected: list[str]
) -> None:
    assert outline(PATH, source)[1] == expected


def test_a_file_that_still_fails_is_a_parse_error() -> None:
    # A lambda with a typed out parameter (castle-core's TargetToInterceptorTestCase.cs):
    # never counted as no tests.
    source = """
        using NUnit.Framework;
        public class ParserTests {
            [Test] public void A() { Run(target: (out Span x) => { x = default; }); }
        }
        """
    with pytest.raises(SyntaxError):
        analyze_file(PATH, textwrap.dedent(source).encode(), SCOPES)


def test_a_project_file_over_the_bound_is_refused_unread(tmp_path: Path) -> None:
    # Every *.csproj of a commit is read for its signs: one past MAX_PROJECT_BYTES is
    # refused from its pack header (never inflated) and named; its files are no tests.
    padding = b"<!-- " + b"x" * MAX_PROJECT_BYTES + b" -->"
    files = {
        "Big.Tests/Big.Tests.csproj": TEST_PROJECT + padding,
        "Big.Tests/ATests.cs": FACT.encode(),
        "Ok.Tests/Ok.Tests.csproj": TEST_PROJECT,
        "Ok.Tests/BTests.cs": FACT.encode(),
    }
    repo = make_repo(tmp_path, "big", commits=1, files=files)
    result = scan_commit(str(tmp_path / "big.git"), repo.head)
    assert [f.path for f in result.inventory.files] == ["Ok.Tests/BTests.cs"]
    assert [(e.path, e.phase) for e in result.inventory.errors] == [
        ("Big.Tests/Big.Tests.csproj", "read")
    ]


def test_the_csharp_parser_is_built_only_when_a_file_with_test_attributes_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A worker builds the parsers of the languages it meets (ADR 0003); a file of a test
    # project without any test attribute (a helper) is not even parsed (the hint).
    with grammars_built(monkeypatch, "csharp") as built:
        assert outline("tests/test_a.py", "def test_a():\n    pass\n") == ("pytest", [])
        helpers = "using Xunit; public static class Helpers { public static int One() => 1; }"
        assert outline(PATH, helpers) == ("", [])
        assert outline(PATH, "public class Helpers { }") == ("", [])
        assert built == []
        assert outline(PATH, FACT) == ("xunit", ["ATests/A active"])
        assert built == ["csharp"]


MORE_MARKERS = [
    (
        "xUnit v3: Explicit = true is skipped, Explicit = false is not",
        "using Xunit; public class ATests { [Fact(Explicit = true)] public void A() { }"
        " [Fact(Explicit = false)] public void B() { } }",
        ["ATests/A skipped", "ATests/B active"],
    ),
    (
        "xUnit v3: a top-level Assert.Skip, Xunit-qualified",
        'using Xunit; public class ATests { [Fact] public void A() { Xunit.Assert.Skip("x"); }'
        " [Fact] public void B() { Assert.Equal(1, 1); } }",
        ["ATests/A skipped", "ATests/B active"],
    ),
    (
        "a TestCase row's Ignore leaves the test as it is (one test whatever its rows)",
        "using NUnit.Framework; public class ATests {"
        ' [TestCase(1, Ignore = "x")] [TestCase(2)] public void A(int x) { } }',
        ["ATests/A active"],
    ),
]


@pytest.mark.parametrize(
    ("case", "source", "expected"), MORE_MARKERS, ids=[c[0] for c in MORE_MARKERS]
)
def test_more_markers(case: str, source: str, expected: list[str]) -> None:
    assert outline(PATH, source)[1] == expected
