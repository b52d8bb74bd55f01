#!/usr/bin/env python3
"""Fails when a product binary depends on tooling.

What counts as product: the programs that ship (cloneset-planner, cloneset-executor, cloneset-agent, the product
CLI clonesetctl, and cloneset-devcluster: PRODUCTS below) and every library of the tree they link, directly or not.
What counts as tooling: everything defined under tools/ (the ./run demo's cloneset-demo, the vectors' generator, the
Go tool modules, ./run's helpers) and tests/ (test support, the fault proxy, the layout checks). Tooling may use the product's libraries, never the other
way round: a product that links or includes tooling ships test code and breaks when a tool changes. What the
daemons share (--help, flag spellings, the entry routine) lives in base/ for that reason (base/daemon_main.h).

Two measures, from the sources so that no build is needed (the CMake and include parsing of executor_boundary.py):

  * link: the targets the products link, followed through every target_link_libraries of the tree's CMake files,
    include no target defined under tools/ or tests/;
  * include: the sources of those targets, and every header of the tree they include, directly or not, include no
    "tools/..." or "tests/..." header.

Usage: product_boundary.py ROOT [TARGET...]   (default targets: PRODUCTS)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from executor_boundary import parse, report  # noqa: E402

PRODUCTS = ["cloneset-planner", "cloneset-executor", "cloneset-agent", "clonesetctl", "cloneset-devcluster"]
TOOLING = ("tools", "tests")


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    targets = argv[2:] or PRODUCTS
    defined, links, sources = parse(root)
    missing = [t for t in targets if t not in defined]
    if missing:
        print(f"product_boundary: no target {' '.join(missing)} in the CMake files under {root}")
        return 1
    found, reached, files = report(root, targets, defined, links, sources, TOOLING)
    if found:
        print(f"product_boundary: {' '.join(targets)} reach tooling (tools/, tests/); move what they need into "
              "base/ or the product's own folders")
        return 1
    print(f"product_boundary: {len(targets)} products ({' '.join(targets)}) link {len(reached)} of the tree's "
          f"targets and compile {len(files)} sources, none of them under tools/ or tests/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
