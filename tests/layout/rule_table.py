#!/usr/bin/env python3
"""Fails when docs/architecture.md's "Where each rule lives" table names a file or function the code does not have.

Each row's middle cell names files (`planner/scale.h`) and, after a file, the functions it holds (`PlanScale`). A
file must exist; a function must be declared in the file named before it (a header names it) or defined in that
file's .cc twin (a function local to the .cc, at the margin: a call does not count). Usage:

  rule_table.py ROOT

Prints every name that does not resolve, with its row; exit 1 if any.
"""
import os
import re
import sys

DOC = "docs/architecture.md"
HEADING = "## 4. Where each rule lives"
CODE = re.compile(r"`([^`]+)`")
FILE = re.compile(r"^[\w./-]+/[\w.-]*$")


def defines(root, path, name):
    """Whether `path` declares or defines `name`: a header names it anywhere (headers declare); a .cc only on a line
    that starts at the margin (a definition: "void PlanScale(", "bool Type::Name("), not in an indented call."""
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        return False
    with open(full, encoding="utf-8", errors="replace") as src:
        text = src.read()
    word = rf"\b{re.escape(name)}\b"
    if path.endswith(".h"):
        return re.search(word, text) is not None
    return re.search(rf"^[^\s/#].*{word}\s*\(", text, re.M) is not None


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    with open(os.path.join(root, DOC), encoding="utf-8") as f:
        lines = f.read().split("\n")
    if HEADING not in lines:
        print(f"rule_table: no '{HEADING}' in {DOC}")
        return 1
    start = lines.index(HEADING)
    problems, rows, names = [], 0, 0
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        cells = line.split("|")
        if not line.startswith("| ") or len(cells) < 5 or set(cells[2].strip()) <= {"-"}:
            continue
        rows += 1
        rule, current = cells[1].strip(), None
        for name in CODE.findall(cells[2]):
            names += 1
            if FILE.match(name):
                current = name if os.path.exists(os.path.join(root, name)) else None
                if current is None:
                    problems.append(f"{rule}: no file {name}")
                continue
            if current is None or not current.endswith((".h", ".cc")) or not re.fullmatch(r"\w+", name):
                continue  # a value (`podsToDelete`), or a name after a folder
            if not any(defines(root, path, name) for path in {current, re.sub(r"\.h$", ".cc", current)}):
                problems.append(f"{rule}: no {name} in {current}")
    for p in problems:
        print(p)
    if problems or rows == 0:
        print(f"rule_table: {len(problems)} name(s) of {DOC} '{HEADING[3:]}' not in the code ({rows} rows read)")
        return 1
    print(f"rule_table: {names} names in {rows} rows of {DOC} resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
