"""Compare a TestNG listing (``LISTED class#method`` lines from Lister.java) with the
active tests of a truth file, by (top-level class, method); exit 1 on a difference.

    python bench/corpus/jvm/testng_compare.py LISTING TRUTH [PATH_PREFIX ...]

Only truth entries under a PATH_PREFIX are compared (the sources that were compiled).
TestNG does not list disabled methods (``enabled = false``): the truth's skipped tests
are left out of the comparison.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    listing, truth_path, *prefixes = sys.argv[1:]
    listed = set()
    with open(listing) as lines:
        for line in lines:
            if line.startswith("LISTED "):
                owner, method = line[len("LISTED ") :].strip().split("#")
                listed.add((owner.rsplit(".", 1)[-1].split("$")[0], method))
    with open(truth_path) as truth_file:
        truth = json.load(truth_file)
    active = {
        (t["file"].rsplit("/", 1)[-1].rsplit(".", 1)[0], t["name"])
        for t in truth["tests"]
        if t["status"] == "active" and t["file"].startswith(tuple(prefixes) or "")
    }
    print(f"TestNG listed {len(listed)}; truth active {len(active)}")
    for name, difference in (("listed only", listed - active), ("truth only", active - listed)):
        for owner, method in sorted(difference):
            print(f"  {name}: {owner}#{method}")
    return 0 if listed == active else 1


if __name__ == "__main__":
    sys.exit(main())
