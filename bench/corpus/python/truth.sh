#!/usr/bin/env bash
# Regenerate tests/fixtures/corpus/truth/NAME.json from NAME's bundle, for the Python
# family: the project and its test dependency group go into a throw-away venv, its own
# collector lists the tests (pytest --collect-only with the pytruth plugin, or the
# project's own unittest suite), then pytruth.py build applies ADR 0005.
#   bench/corpus/python/truth.sh BUNDLE NAME        (NAME: requests, click, attrs, tornado)
# Needs the network (PyPI) and uv; scratch goes to /tmp/corpus/python/NAME.
set -euo pipefail
bundle=$(realpath "$1") name=$2
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../../tests/fixtures/corpus/truth/$name.json"
work=/tmp/corpus/python/$name
python=3.11
keep= notes=()
case $name in
requests)
    repository=psf/requests license=Apache-2.0 framework=pytest group=test
    notes=("addopts --doctest-modules: no doctests in tests/, so every item is a test function") ;;
click)
    repository=pallets/click license=BSD-3-Clause framework=pytest group=tests
    notes=() ;;
attrs)
    repository=python-attrs/attrs license=MIT framework=pytest group=tests
    # tests/conftest.py's collect_ignore drops this file before Python 3.14; pytruth
    # collects it anyway (ADR 0005 counts what is written).
    keep=tests/test_forward_references.py
    notes=("tests/test_forward_references.py is in tests/conftest.py's collect_ignore before Python 3.14; pytruth collects it anyway (PYTRUTH_KEEP), so runner_count includes its 1 item"
        "pyproject.toml's [tool.pytest] (pytest 9's TOML table) sets testpaths = [\"tests\"]: bench/test_benchmarks.py (run only by tox's codspeed env, naming it) is not collected"
        "tests/test_mypy.yml (pytest-mypy-plugins YAML cases, tox's mypy env) is not Python and not listed") ;;
tornado)
    repository=tornadoweb/tornado license=Apache-2.0 framework=unittest group=
    notes=("suite: tornado.test.runtests.all() (python -m tornado.test.runtests, as runtests.sh and tox run it): unittest's loader over TEST_MODULES, which names every tornado/test/*_test.py"
        "maint/test/redbot/red_test.py and maint/test/cython/cythonapp_test.py are separate legacy suites (their own tox.ini, py27/py36, redbot from git, a Cython build), not in TEST_MODULES: not listed"
        "tornado/test/util.py binds skipIfNonUnix, skipIfNoNetwork, skipIfEmulated, skipNotCPython (= unittest.skipIf(...)) and skipIfNoIPv6; the tests they decorate, directly or on their class, are skipped here whatever this machine's conditions (ADR 0005: conditional skips count as skipped)"
        "@abstract_base_test classes raise SkipTest in setUpClass at run time, which is no marker: they are collected, and their tests listed active (runtests hides those skips from its report)") ;;
*) echo "unknown corpus repository: $name" >&2; exit 2 ;;
esac

# The bundle's commit has no parents: unbundle into an empty repository and export it.
rm -rf "$work" && mkdir -p "$work/repo"
git init -q --bare "$work/git"
commit=$(git --git-dir="$work/git" bundle unbundle "$bundle" | awk '$2 == "HEAD" {print $1}')
echo "$commit" >"$work/git/shallow"
git --git-dir="$work/git" archive "$commit" | tar -x -C "$work/repo"
committed=$(git --git-dir="$work/git" log -1 --format=%cs "$commit")

python -m uv venv -q --python "$python" "$work/venv"
py=$work/venv/bin/python
cd "$work/repo"
if [ -n "$group" ]; then
    python -m uv pip install -q --python "$py" -e . --group "$group"
fi
raw=$work/raw.json
if [ "$framework" = pytest ]; then
    # The repository's own config (rootdir, testpaths, addopts) decides what is collected.
    PYTRUTH_OUT=$raw PYTRUTH_ROOT=$work/repo PYTRUTH_KEEP=$keep PYTHONPATH=$here \
        "$py" -m pytest --collect-only -q -p pytruth -p no:cacheprovider \
        >"$work/collect.log" 2>&1 || true
    tool="pytest $("$py" -c 'import pytest; print(pytest.__version__)') --collect-only"
else
    "$py" "$here/pytruth.py" unittest . "$raw" --names tornado.test.runtests:all
    tool="unittest (tornado.test.runtests.all)"
fi
[ -s "$raw" ] || { echo "no collection; see $work/collect.log" >&2; exit 1; }
tool="$tool, Python $("$py" -c 'import platform; print(platform.python_version())')"
tool="$tool + bench/corpus/python/pytruth.py"
note_args=()
for n in "${notes[@]}"; do note_args+=(--note "$n"); done
"$py" "$here/pytruth.py" build "$raw" "$out" "${note_args[@]}" \
    --meta "name=$name" --meta "repository=github.com/$repository" \
    --meta "commit=$commit" --meta "committed=$committed" --meta "license=$license" \
    --meta "frameworks=$framework" --meta "tool=$tool"
