#!/usr/bin/env bash
# Regenerate tests/fixtures/corpus/truth/NAME.json for a Rust repository from its bundle:
#   bench/corpus/rust/truth.sh BUNDLE NAME
# In every package of the repository (each Cargo.toml with [package]), libtest lists the
# tests that `cargo test` runs (`cargo test --tests -- --list --format json`: lib, bins
# and integration tests, doctests left out), and rusttruth.py applies ADR 0005 to the
# lists. crates.io is out of reach here, so dependencies come from Debian's packaged
# crate sources (bookworm, installed as root); the few requirements Debian cannot meet
# are edited in the scratch copy only (the bundle is never changed), each below with
# why it changes no test.
set -euo pipefail
bundle=$(realpath "$1") name=$2
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../../tests/fixtures/corpus/truth/$name.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

prepare() { :; }
case $name in
bytes)
    repository=github.com/tokio-rs/bytes features="--features std,serde"
    debs="librust-serde-dev librust-serde-test-dev"
    note="Cargo.toml edited in the scratch copy: the extra-platforms (portable-atomic 1.x)"
    note+=" and loom 0.7 dependencies removed (not packaged in Debian bookworm)"
    # extra-platforms only swaps atomics; loom is used under --cfg loom only (its 2 tests
    # are cfg'd out here, and rusttruth.py adds them from the source).
    prepare() {
        sed -i -e '/^extra-platforms = /d' -e '/^loom = /d' \
            -e "/^\[target.'cfg(loom)'.dev-dependencies\]/d" Cargo.toml
    }
    ;;
smallvec)
    repository=github.com/servo/rust-smallvec features=--all-features
    debs="librust-serde-dev librust-bincode-dev"
    note="--all-features with RUSTC_BOOTSTRAP=1 (specialization and may_dangle are nightly);"
    note+=" fuzz/Cargo.toml edited in the scratch copy: the optional honggfuzz and afl"
    note+=" dependencies and their features removed (not packaged in Debian bookworm);"
    note+=" fuzz/fuzz_targets/smallvec_ops.rs is the fuzz package's [[bin]] (a custom path),"
    note+=" whose unit test cargo test runs in fuzz/"
    # Those features only pick a fuzzing engine for main(); the test is a unit test of
    # the fuzz target's bin, which `cargo test` runs in fuzz/.
    prepare() {
        sed -i -e '/^afl_fuzz = \|^honggfuzz_fuzz = \|^honggfuzz = \|^afl = /d' fuzz/Cargo.toml
    }
    ;;
anyhow)
    repository=github.com/dtolnay/anyhow features=--all-features
    debs="librust-futures-dev librust-rustversion-dev librust-thiserror-dev librust-trybuild-dev"
    note="Cargo.toml edited in the scratch copy: the unused dev-dependency syn 3 removed,"
    note+=" thiserror 2 -> 1 and trybuild 1.0.108 -> 1 (Debian bookworm's versions)"
    # thiserror 1 derives what the tests use of 2; trybuild's version matters when the
    # ui test runs, not to list it.
    prepare() {
        sed -i -e '/^syn = /d' -e 's/^thiserror = .*/thiserror = "1"/' \
            -e 's/^trybuild = { version = "[^"]*"/trybuild = { version = "1"/' Cargo.toml
    }
    ;;
*)
    echo "no settings for '$name' in $0" >&2
    exit 2
    ;;
esac

apt-get update -qq
# shellcheck disable=SC2086  # a list of package names
apt-get install -y -qq $debs >/dev/null

# The bundle's commit has no parents: unbundle its objects and mark it shallow, as a
# clone would fail its connectivity check.
git init --quiet --bare "$work/repo.git"
commit=$(git --git-dir="$work/repo.git" bundle unbundle "$bundle" | cut -d' ' -f1)
echo "$commit" >"$work/repo.git/shallow"
committed=$(git --git-dir="$work/repo.git" log -1 --format=%cs "$commit")
mkdir "$work/src"
git --git-dir="$work/repo.git" archive "$commit" | tar -x -C "$work/src"
license=$(sed -n 's/^license *= *"\(.*\)"/\1/p' "$work/src/Cargo.toml" | head -1)
(cd "$work/src" && prepare)

mkdir "$work/cargo-home"
cat >"$work/cargo-home/config.toml" <<'EOF'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
[net]
offline = true
EOF
export CARGO_HOME="$work/cargo-home" RUSTC_BOOTSTRAP=1
# One listing and one target directory (for its dep-info) per package; the features
# are the root package's, the others are built with their defaults.
runs=()
n=0
while read -r manifest; do
    dir=$(dirname "$manifest") n=$((n + 1))
    flags=--offline
    [ "$dir" = . ] && flags+=" $features"
    find "$work/src/$dir" -maxdepth 1 -name Cargo.lock -delete # crates.io's versions
    # shellcheck disable=SC2086  # flags are words
    (cd "$work/src/$dir" && CARGO_TARGET_DIR="$work/target$n" cargo test $flags --tests -- \
        --list --format json -Z unstable-options) >"$work/listing$n.json" 2>"$work/cargo$n.log" ||
        { tail -30 "$work/cargo$n.log" >&2; exit 1; }
    runs+=("$dir" "$work/listing$n.json" "$work/target$n/debug/deps")
done < <(cd "$work/src" && grep -rl --include=Cargo.toml '^\[package\]' . | sed 's#^\./##' | sort)

tool="$(cargo --version | cut -d' ' -f1-2) / $(rustc --version | cut -d' ' -f1-2):"
tool+=" RUSTC_BOOTSTRAP=1 cargo test $features --tests -- --list --format json"
tool+=" -Z unstable-options in each package, dependencies from Debian bookworm's"
tool+=" packaged crates, + bench/corpus/rust/rusttruth.py"
python3 - "$work/meta.json" <<EOF
import json, sys
json.dump({"name": "$name", "repository": "$repository", "commit": "$commit",
           "committed": "$committed", "license": "$license", "frameworks": ["cargo-test"],
           "tool": "$tool", "notes": ["$note"]}, open(sys.argv[1], "w"))
EOF
python3 "$here/rusttruth.py" "$work/src" "$work/meta.json" "$out" "${runs[@]}"
