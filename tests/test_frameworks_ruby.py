"""RSpec and minitest, table-driven (issue 41; ADR 0004, ADR 0005): what is a test, with
which status, what is NOT one, and which files each framework runs."""

from __future__ import annotations

import pytest

from .support.scans import found, frameworks_of, grammars_built

RSPEC = [
    (
        "groups nest; it/specify/example/scenario are examples",
        """\
        ::RSpec.describe User do
          context "when new" do
            it "is valid" do
              expect(1).to eq 1
            end
            specify("has no id") { }
          end
          feature "signup" do
            scenario "works" do end
          end
          describe "#name" do
            example "is a string" do end
          end
        end""",
        [
            ("User/when new/is valid", "active"),
            ("User/when new/has no id", "active"),
            ("User/signup/works", "active"),
            ("User/#name/is a string", "active"),
        ],
    ),
    (
        "x-forms skip, f-forms focus, on examples and groups",
        """\
        describe "a" do
          xit "b" do end
          fit "c" do end
          xspecify "d" do end
          fexample "e" do end
          xdescribe "f" do
            it "g" do end
          end
          fcontext "h" do
            it "i" do end
          end
        end""",
        [
            ("a/b", "skipped"),
            ("a/c", "focused"),
            ("a/d", "skipped"),
            ("a/e", "focused"),
            ("a/f/g", "skipped"),
            ("a/h/i", "focused"),
        ],
    ),
    (
        "skip and pending as definers: skipped, xfail; without a block: todo",
        """\
        describe "a" do
          skip "b" do end
          pending "c" do end
          it "d"
          [1, 2].each do |n|
            pending "e #{n}"
          end
        end""",
        [("a/b", "skipped"), ("a/c", "xfail"), ("a/d", "todo"), ("a/e #{n}", "todo")],
    ),
    (
        "metadata: :skip, skip: true or a reason, :focus, pending: true; skip: false is none",
        """\
        describe "a", :focus do
          it "b", :skip do end
          it "c" do end
        end
        describe "d" do
          it "e", skip: "flaky" do end
          it "f", skip: false do end
          it "g", pending: true do end
          it "h", focus: true do end
          context "i", skip: true do
            it "j" do end
          end
        end""",
        [
            ("a/b", "skipped"),
            ("a/c", "focused"),
            ("d/e", "skipped"),
            ("d/f", "active"),
            ("d/g", "xfail"),
            ("d/h", "focused"),
            ("d/i/j", "skipped"),
        ],
    ),
    (
        "a top-level skip/pending statement marks the example; inside an if it does not",
        """\
        describe "a" do
          it "b" do
            skip "not on CI"
          end
          it "c" do
            pending
            expect(1).to eq 2
          end
          it "d" do
            skip if ENV["CI"]
          end
        end""",
        [("a/b", "skipped"), ("a/c", "xfail"), ("a/d", "active")],
    ),
    (
        "an unnamed example is named by its line; its is an example",
        """\
        describe Array do
          it { is_expected.to be_empty }
          its(:size) { is_expected.to eq 0 }
        end""",
        [("Array/example at line 2", "active"), ("Array/:size", "active")],
    ),
    (
        "shared examples count once where written; it_behaves_like adds nothing",
        """\
        RSpec.shared_examples "a collection" do
          it "has a size" do end
        end
        describe Array do
          it_behaves_like "a collection"
          include_examples "a collection"
        end
        describe Hash do
          it_behaves_like "a collection"
        end""",
        [("a collection/has a size", "active")],
    ),
    (
        "NOT examples: skip/pending in hooks, it in a method or on a receiver, a group "
        "without a block, let blocks",
        """\
        describe "a" do
          before { skip "slow" }
          let(:x) { pending "y" }
          def self.helper
            it "h" do end
          end
          obj.it "o" do end
          describe "no block"
        end""",
        [],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), RSPEC, ids=[c[0] for c in RSPEC])
def test_rspec(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("spec/a_spec.rb", source) == expected, case


MINITEST = [
    (
        "Minitest::Test subclasses' test_ methods; other methods and classes are not tests",
        """\
        require "minitest/autorun"
        class ParserTest < Minitest::Test
          def setup; end
          def test_parses; end
          def helper_test_x; end
        end
        class Helper
          def test_not; end
        end""",
        [("ParserTest/test_parses", "active")],
    ),
    (
        "Test::Unit, ActiveSupport and a project's base test class; Rails' test blocks",
        """\
        class A < Test::Unit::TestCase
          def test_a; end
        end
        module Api
          class B < ActiveSupport::TestCase
            test "creates a user" do end
          end
        end
        class C < BaseTest
          def test_c; end
        end""",
        [("A/test_a", "active"), ("Api/B/creates a user", "active"), ("C/test_c", "active")],
    ),
    (
        "a module's tests, included by test classes, count once where written",
        """\
        module Shared
          def test_shared; end
          test "declared" do end
        end
        class A < Minitest::Test
          include Shared
        end
        class B < Minitest::Test
          include Shared
        end""",
        [("Shared/test_shared", "active"), ("Shared/declared", "active")],
    ),
    (
        "a top-level skip marks the test; inside an if it does not",
        """\
        class A < Minitest::Test
          def test_a
            skip "later"
          end
          def test_b
            skip
          end
          def test_c
            skip unless windows?
            assert true
          end
        end""",
        [("A/test_a", "skipped"), ("A/test_b", "skipped"), ("A/test_c", "active")],
    ),
    (
        "spec style: describe with it/specify, nested describes as their own suites",
        """\
        describe Parser do
          before { @p = Parser.new }
          it "parses" do end
          specify "the empty string" do
            skip
          end
          it "todo"
          describe "errors" do
            it "raises" do end
          end
        end""",
        [
            ("Parser/parses", "active"),
            ("Parser/the empty string", "skipped"),
            ("Parser/todo", "todo"),
            ("Parser/errors/raises", "active"),
        ],
    ),
    (
        "NOT tests: test_ methods of a plain class, it outside a describe "
        "on a receiver, RSpec's forms",
        """\
        class Thing
          def test_thing; end
        end
        class D < Minitest::Test
          def self.test_class_method; end
        end
        obj.it "x" do end
        it "top level: no describe, no test" do end
        test "nor here" do end
        describe "a" do
          xit "b" do end
          fit "c" do end
        end""",
        [],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), MINITEST, ids=[c[0] for c in MINITEST])
def test_minitest(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("test/a_test.rb", source) == expected, case


SPEC = 'describe "a" do\n  it "b" do end\nend\n'
MINI = "class A < Minitest::Test\n  def test_a; end\nend\n"

FILES = [
    (
        "RSpec runs spec/**/*_spec.rb, at any depth of a project; not helpers, not lib",
        {
            "spec/models/user_spec.rb": SPEC,
            "gems/x/spec/a_spec.rb": SPEC,
            "spec/spec_helper.rb": SPEC,
            "spec/support/shared.rb": SPEC,
            "lib/user_spec.rb": SPEC,
        },
        {"spec/models/user_spec.rb": "rspec", "gems/x/spec/a_spec.rb": "rspec"},
    ),
    (
        ".rspec's --default-path and --pattern replace the defaults",
        {
            ".rspec": "--require spec_helper\n--default-path specs --pattern '**/*_check.rb'\n",
            "specs/a_check.rb": SPEC,
            "specs/a_spec.rb": SPEC,
            "spec/b_spec.rb": SPEC,
        },
        {"specs/a_check.rb": "rspec"},
    ),
    (
        ".rspec's --pattern starting with the default path is from the project; "
        "--exclude-pattern leaves files out",
        {
            ".rspec": "--pattern=spec/unit/**/*_spec.rb,spec/api/*_spec.rb\n"
            "--exclude-pattern spec/unit/slow/**/*_spec.rb\n",
            "spec/unit/a_spec.rb": SPEC,
            "spec/unit/slow/b_spec.rb": SPEC,
            "spec/api/c_spec.rb": SPEC,
            "spec/other/d_spec.rb": SPEC,
        },
        {"spec/unit/a_spec.rb": "rspec", "spec/api/c_spec.rb": "rspec"},
    ),
    (
        "minitest runs test/**/{test_*,*_test}.rb and test/**/*_spec.rb; not test_helper",
        {
            "test/test_parser.rb": MINI,
            "test/unit/lexer_test.rb": MINI,
            "test/thing_spec.rb": SPEC,
            "test/test_helper.rb": MINI,
            "test/support/helpers.rb": MINI,
            "lib/parser_test.rb": MINI,
        },
        {
            "test/test_parser.rb": "minitest",
            "test/unit/lexer_test.rb": "minitest",
            "test/thing_spec.rb": "minitest",
        },
    ),
    (
        "a Rakefile's literal TestTask pattern or FileList replaces the defaults",
        {
            "Rakefile": "Rake::TestTask.new do |t|\n"
            '  t.test_files = FileList["test/tc_*.rb"]\nend\n',
            "test/tc_a.rb": MINI,
            "test/b_test.rb": MINI,
            "sub/Rakefile": "Rake::TestTask.new { |t| t.pattern = 'checks/**/*_check.rb' }\n",
            "sub/checks/x/y_check.rb": MINI,
        },
        {"test/tc_a.rb": "minitest", "sub/checks/x/y_check.rb": "minitest"},
    ),
    (
        "a Rakefile without a TestTask changes nothing; a file requiring minitest is minitest's",
        {
            "Rakefile": "task default: :spec\n",
            "test/a_test.rb": MINI,
            "spec/b_spec.rb": 'require "minitest/autorun"\n' + SPEC,
        },
        {"test/a_test.rb": "minitest", "spec/b_spec.rb": "rspec"},
    ),
]


@pytest.mark.parametrize(("case", "files", "expected"), FILES, ids=[c[0] for c in FILES])
def test_ruby_files(case: str, files: dict[str, str], expected: dict[str, str]) -> None:
    assert frameworks_of(files) == expected, case


def test_a_pattern_that_is_code_leaves_the_defaults_said_so() -> None:
    from clonegate._adapters.analysis.frameworks import minitest, rspec

    settings = minitest.read_config(
        "Rakefile", b"Rake::TestTask.new { |t| t.pattern = ENV['P'] }\n", minitest.DEFAULTS
    )
    assert settings is not None
    assert settings.note
    assert settings.files == minitest.DEFAULTS.files
    erb = rspec.read_config(".rspec", b"--pattern <%= ENV['P'] %>\n", rspec.DEFAULTS)
    assert erb.note
    assert erb.files == rspec.DEFAULTS.files


def test_the_ruby_parser_is_built_only_when_a_ruby_file_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with grammars_built(monkeypatch, "ruby") as built:
        found("tests/test_a.py", "def test_a():\n    pass\n")
        assert built == []
        assert found("spec/a_spec.rb", SPEC)
        assert built == ["ruby"]


def test_deep_nesting_is_walked_without_recursion() -> None:
    """900 nested groups (under the tree's depth bound): read, not a RecursionError."""
    depth = 300  # each group is three syntax levels: call, do_block, body_statement
    source = 'describe "g" do\n' * depth + 'it "x" do end\n' + "end\n" * depth
    tests = found("spec/deep_spec.rb", source)
    assert tests == [("g/" * depth + "x", "active")]


@pytest.mark.parametrize(
    "content",
    [
        b"--pattern 'spec/**/*_spec.rb\n",  # an unclosed quote: RSpec's shlex refuses it
        b"--pattern \xff\xfe\n",  # not UTF-8
    ],
)
def test_an_rspec_config_that_cannot_be_read_is_a_scan_error_and_its_defaults(
    content: bytes,
) -> None:
    from clonegate._adapters.analysis.config import ConfigScopes
    from clonegate._adapters.analysis.scan import analyze_file

    sources = {".rspec": content, "spec/a_spec.rb": SPEC.encode()}
    scopes = ConfigScopes(sources, sources.__getitem__)
    assert [(e.path, e.phase) for e in scopes.errors] == [(".rspec", "config")]
    result = analyze_file("spec/a_spec.rb", sources["spec/a_spec.rb"], scopes)
    assert result is not None
    assert result.framework == "rspec"
    assert result.config_note == ".rspec could not be read: defaults"
