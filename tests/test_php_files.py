"""Which PHP files PHPUnit and Pest run (issue 41; ADR 0004): ``phpunit.xml``'s
testsuites or the defaults, and a file's framework by what it holds; the XML read as
bounded data, a hostile one refused."""

from __future__ import annotations

import pytest

from clonegate._adapters.analysis.config import ConfigScopes
from clonegate._adapters.analysis.frameworks import phpunit
from clonegate._adapters.analysis.frameworks.definition import Settings
from clonegate._adapters.analysis.problems import Refused

from .support.sample_sources import PHPUNIT_CLASS
from .support.scans import frameworks_of

PEST_FILE = "<?php\nit('a', function () {});\n"
CONFIG = """\
<?xml version="1.0" encoding="UTF-8"?>
<phpunit bootstrap="vendor/autoload.php">
  <testsuites>
    <testsuite name="unit">
      <directory suffix="Spec.php">./spec/unit</directory>
      <directory>tests</directory>
      <file>checks/OneCheck.php</file>
      <exclude>tests/Slow</exclude>
    </testsuite>
  </testsuites>
  <source><include><directory suffix=".php">src</directory></include></source>
</phpunit>
"""

FILES = [
    (
        "defaults: *Test.php under a test/tests directory; PHPUnit's classes, Pest's calls",
        {
            "tests/Unit/ATest.php": PHPUNIT_CLASS,
            "tests/Feature/BTest.php": PEST_FILE,
            "src/Component/Tests/CTest.php": PHPUNIT_CLASS,
            "src/DTest.php": PHPUNIT_CLASS,
            "tests/Unit/Helper.php": PHPUNIT_CLASS,
            "tests/Pest.php": PEST_FILE,
            "tests/TestCase.php": "<?php\nabstract class TestCase extends Base {}\n",
        },
        {
            "tests/Unit/ATest.php": "phpunit",
            "tests/Feature/BTest.php": "pest",
            "src/Component/Tests/CTest.php": "phpunit",
        },
    ),
    (
        "phpunit.xml's testsuites: directory suffix, file, exclude; <source> is not tests",
        {
            "phpunit.xml": CONFIG,
            "spec/unit/ASpec.php": PHPUNIT_CLASS,
            "spec/unit/ATest.php": PHPUNIT_CLASS,
            "tests/BTest.php": PEST_FILE,
            "tests/Slow/CTest.php": PHPUNIT_CLASS,
            "checks/OneCheck.php": PHPUNIT_CLASS,
            "src/DTest.php": PHPUNIT_CLASS,
        },
        {
            "spec/unit/ASpec.php": "phpunit",
            "tests/BTest.php": "pest",
            "checks/OneCheck.php": "phpunit",
        },
    ),
    (
        "phpunit.xml before phpunit.xml.dist in one directory",
        {
            "phpunit.xml": CONFIG.replace("./spec/unit", "other"),
            "phpunit.xml.dist": CONFIG,
            "spec/unit/ASpec.php": PHPUNIT_CLASS,
            "other/BSpec.php": PHPUNIT_CLASS,
        },
        {"other/BSpec.php": "phpunit"},
    ),
    (
        "a Pest file declaring a helper class is Pest's; a file of plain code is no one's",
        {
            "phpunit.xml": CONFIG,
            "tests/AMixedTest.php": PEST_FILE + "class Fake extends Base {}\n",
            "tests/BPlainTest.php": "<?php\nfunction helper() {}\n",
        },
        {"tests/AMixedTest.php": "pest"},
    ),
]


@pytest.mark.parametrize(("case", "files", "expected"), FILES, ids=[c[0] for c in FILES])
def test_php_files(case: str, files: dict[str, str], expected: dict[str, str]) -> None:
    assert frameworks_of(files) == expected


HOSTILE_CONFIGS = [
    (
        "an external entity",
        b'<?xml version="1.0"?>\n<!DOCTYPE p [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
        b"<phpunit><testsuites><testsuite><directory>&x;</directory></testsuite>"
        b"</testsuites></phpunit>",
    ),
    (
        "billion laughs",
        b'<!DOCTYPE p [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b"<phpunit>&b;</phpunit>",
    ),
    ("nested past the bound", b"<a>" * 10_000 + b"</a>" * 10_000),
    ("too large", b"<phpunit>" + b" " * (phpunit.MAX_CONFIG_BYTES + 1) + b"</phpunit>"),
]


@pytest.mark.parametrize(("case", "content"), HOSTILE_CONFIGS, ids=[c[0] for c in HOSTILE_CONFIGS])
def test_hostile_phpunit_xml_is_refused(case: str, content: bytes) -> None:
    with pytest.raises(Refused):
        phpunit.read_config("phpunit.xml", content, phpunit.DEFAULTS)


def test_phpunit_xml_not_xml_or_without_testsuite() -> None:
    with pytest.raises(ValueError, match="not XML"):
        phpunit.read_config("phpunit.xml", b"<phpunit>", phpunit.DEFAULTS)
    settings = phpunit.read_config("phpunit.xml", b"<phpunit/>", phpunit.DEFAULTS)
    assert settings.files == phpunit.DEFAULTS.files
    assert settings.note == "phpunit.xml names no testsuite: defaults"


def test_phpunit_xml_entries_outside_or_odd_are_literal() -> None:
    content = (
        b"<phpunit><testsuites><testsuite>"
        b"<directory>../elsewhere</directory><directory>/abs</directory>"
        b'<directory prefix="x*" suffix="{a,b}.php">t</directory>'
        b"</testsuite></testsuites></phpunit>"
    )
    settings = phpunit.read_config("phpunit.xml", content, phpunit.DEFAULTS)
    assert settings == Settings(files=("t/**/x[*]*[{]a,b[}].php",))


def test_an_exclude_is_its_testsuites_own() -> None:
    """psr7's unit suite excludes tests/Integration, which its next suite runs."""
    config = """\
    <phpunit><testsuites>
      <testsuite name="unit"><directory>tests</directory><exclude>tests/Integration</exclude>
      </testsuite>
      <testsuite name="integration"><directory>tests/Integration</directory></testsuite>
    </testsuites></phpunit>"""
    files = {
        "phpunit.xml.dist": config,
        "tests/ATest.php": PHPUNIT_CLASS,
        "tests/Integration/BTest.php": PHPUNIT_CLASS,
    }
    assert frameworks_of(files) == {
        "tests/ATest.php": "phpunit",
        "tests/Integration/BTest.php": "phpunit",
    }


def test_a_refused_phpunit_xml_is_a_config_error_and_the_defaults_apply() -> None:
    hostile = b'<!DOCTYPE p [<!ENTITY x SYSTEM "file:///etc/passwd">]><phpunit>&x;</phpunit>'
    sources = {
        "phpunit.xml": hostile,
        "tests/ATest.php": PHPUNIT_CLASS.encode(),
        "x/BTest.php": b"",
    }
    scopes = ConfigScopes(sources, sources.__getitem__)
    assert [(e.path, e.phase) for e in scopes.errors] == [("phpunit.xml", "config")]
    assert "DTD" in scopes.errors[0].message
    assert frameworks_of({p: d.decode() for p, d in sources.items()}) == {
        "tests/ATest.php": "phpunit"
    }
