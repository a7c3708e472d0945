#!/usr/bin/env bash
# Truth for a Ruby corpus repository (needs Debian's ruby, ruby-rspec, ruby-minitest):
#   bench/corpus/ruby/truth.sh NAME rspec [rspec args]
#   bench/corpus/ruby/truth.sh NAME minitest 'GLOB'...   (the Rakefile TestTask's files)
#   TRUTH_DEFINE_STUBBED=1 bench/corpus/ruby/truth.sh i18n minitest 'test/**/*_test.rb'   (see common.rb)
# Unbundles tests/fixtures/corpus/NAME.bundle into /tmp/corpus/ruby/NAME, lists the
# definitions with rspec_truth.rb or minitest_truth.rb, writes truth/NAME.json.
set -euo pipefail
name=$1 kind=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
corpus="$here/../../../tests/fixtures/corpus"
work=/tmp/corpus/ruby/$name
rm -rf "$work" && mkdir -p "$work"
git clone --quiet "$corpus/$name.bundle" "$work/src"
cd "$work/src"
if [ "$kind" = rspec ]; then
  ruby "$here/rspec_truth.rb" . "$work/raw.json" "$@" >/dev/null
  tool="rspec $(rspec --version | sed -n 's/.*rspec-core \([0-9.]*\).*/\1/p') --dry-run (rspec_truth.rb walks RSpec.world)"
else
  ruby "$here/minitest_truth.rb" . "$work/raw.json" "$@" >/dev/null
  tool="minitest $(ruby -rminitest -e 'print Minitest::VERSION') runnable_methods (minitest_truth.rb)"
fi
python3 - "$work/raw.json" "$corpus/truth/$name.json" "$name" "$kind" "$tool" "$(git rev-parse HEAD) $(date -u -d @"$(git cat-file commit HEAD | sed -n 's/^committer .* \([0-9]*\) [-+][0-9]*$/\1/p')" +%F)" <<'PY'
import json, sys
raw, out, name, kind, tool, head = sys.argv[1:]
data = json.load(open(raw))
commit, date = head.split()
old = json.load(open(out)) if __import__("os").path.exists(out) else {}
json.dump({
    "name": name, "repository": old.get("repository", ""), "commit": commit,
    "committed": date, "license": old.get("license", ""), "frameworks": [kind],
    "tool": tool, "runner_count": data["runner_count"], "notes": old.get("notes", []),
    "tests": [dict(t, line=t["line"]) for t in data["tests"]],
}, open(out, "w"), indent=1)
open(out, "a").write("\n")
PY
echo "$name: $(python3 -c "import json;print(len(json.load(open('$corpus/truth/$name.json'))['tests']))") definitions"
