#!/usr/bin/env bash
# PHPUnit truth for one corpus bundle: `phpunit --list-tests-xml` (Debian's phpunit 9.6,
# `apt-get install -y php-cli phpunit`) with the project's own phpunit.xml(.dist), then
# phpunit_truth.php applies ADR 0005. No Composer here: autoload.php stands in for
# vendor/autoload.php with the project's composer.json autoload maps.
# Pest (third argument `pest`): pest_truth.php, PHPUnit's own reading of phpunit.xml
# and PHP running each file with stand-ins for Pest's functions.
#   bench/corpus/php/truth.sh tests/fixtures/corpus/NAME.bundle NAME [pest] > tests.json
set -euo pipefail
bundle=$(realpath "$1") name=$2 kind=${3:-phpunit}
here=$(cd "$(dirname "$0")" && pwd)
work=/tmp/corpus/php/$name
rm -rf "$work" && mkdir -p "$(dirname "$work")"
git clone --quiet "$bundle" "$work"
mkdir -p "$work/vendor" && cp "$here/autoload.php" "$work/vendor/autoload.php"
if [ "$kind" = pest ]; then
    exec php "$here/pest_truth.php" "$work"
fi
# PHPUnit 9 exits non-zero when a test's destructor throws after the list is written.
(cd "$work" && phpunit --list-tests-xml "$work.list.xml" >&2) || true
php "$here/phpunit_truth.php" "$work" "$work.list.xml"
