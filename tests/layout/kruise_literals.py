#!/usr/bin/env python3
"""Fails when a C++ file outside kruise/ spells an "apps.kruise.io/..." string literal.

The Kruise API's names (API versions, labels, annotations) live in kruise/keys.h, so that the planner, the executor,
the agent, the conversion webhook and the snapshot codec cannot drift apart on one of them. Comments may name them.
Exceptions, where the literal is the point: tests and their support (files ending in _test.cc, folders named
tests/ or testing/, the test vectors of tools/vectors/), benchmarks (_bench.cc, bench/ folders), which build the
objects a real cluster would send. Usage:

  kruise_literals.py ROOT

Prints every such literal with its file and line; exit 1 if any.
"""
import re
import sys

from tree import cpp_lines_matching, line_check_main

LITERAL = re.compile(r'"apps\.kruise\.io/')
EXCEPT = re.compile(r"(^kruise/|_test\.cc$|_bench\.cc$|(^|/)(tests|testing|bench)/|^tools/vectors/)")


def check(root):
    return cpp_lines_matching(root, "kruise_literals", LITERAL, lambda path: EXCEPT.search(path))


def main(argv):
    return line_check_main(
        argv, __doc__, check,
        lambda count: f'kruise_literals: {count} "apps.kruise.io/" literal(s) outside kruise/; name the constant of '
                      "kruise/keys.h instead (add it there if it is new)",
        'kruise_literals: no "apps.kruise.io/" literal outside kruise/')


if __name__ == "__main__":
    sys.exit(main(sys.argv))
