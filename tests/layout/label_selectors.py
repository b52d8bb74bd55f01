#!/usr/bin/env python3
"""Fails when a C++ file other than common/label_selector.{h,cc} spells a label selector operator.

Label selectors are parsed, checked, matched and printed by common::LabelSelector alone, so the planner, the image
pre-download coordinator, the update order and the embedded cluster's list and watch filters cannot drift apart on
what a selector selects. A second matcher or printer has to name the operators: "NotIn" or "DoesNotExist" (the
metav1 names) or "notin" (the string form); "In" and "Exists" are too common to tell. Comments may name them.
Exceptions, where the literal is the point: tests and their support (files ending in _test.cc, folders named
tests/ or testing/, the test vectors of tools/vectors/) and benchmarks (_bench.cc, bench/ folders). Usage:

  label_selectors.py ROOT

Prints every such literal with its file and line; exit 1 if any.
"""
import re
import sys

from tree import cpp_lines_matching, line_check_main

LITERAL = re.compile(r'"(NotIn|DoesNotExist)"|\bnotin\b')
HOME = ("common/label_selector.h", "common/label_selector.cc")
EXCEPT = re.compile(r"(_test\.cc$|_bench\.cc$|(^|/)(tests|testing|bench)/|^tools/vectors/)")


def check(root):
    return cpp_lines_matching(root, "label_selectors", LITERAL, lambda path: path in HOME or EXCEPT.search(path))


def main(argv):
    return line_check_main(
        argv, __doc__, check,
        lambda count: f"label_selectors: {count} selector operator(s) outside common/label_selector.cc; parse, "
                      "match and print selectors with common::LabelSelector instead",
        "label_selectors: no selector operator outside common/label_selector.cc")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
