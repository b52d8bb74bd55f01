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

from tree import checkout_files

LITERAL = re.compile(r'"apps\.kruise\.io/')
EXCEPT = re.compile(r"(^kruise/|_test\.cc$|_bench\.cc$|(^|/)(tests|testing|bench)/|^tools/vectors/)")


def code_part(line):
    """The line without a trailing // comment (a // inside a string literal does not start one)."""
    in_string, i = False, 0
    while i < len(line):
        c = line[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif line.startswith("//", i):
            return line[:i]
        i += 1
    return line


def check(root):
    problems = []
    for path in checkout_files(root, "kruise_literals"):
        if not path.endswith((".cc", ".h")) or EXCEPT.search(path):
            continue
        with open(f"{root}/{path}", encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if LITERAL.search(code_part(line)):
                    problems.append(f"{path}:{number}: {line.strip()}")
    return problems


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f'kruise_literals: {len(problems)} "apps.kruise.io/" literal(s) outside kruise/; name the constant of '
              "kruise/keys.h instead (add it there if it is new)")
        return 1
    print('kruise_literals: no "apps.kruise.io/" literal outside kruise/')
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
