#!/usr/bin/env python3
"""Fails when the #include edges inside a folder form a loop.

A module is a file's path without its extension, so x.h and x.cc are one module: x.cc including y.h and y.h
(or y.cc) including x.h is a loop even though no header includes itself. Only includes of files that exist under
the checked folders count (system and library headers are not edges). Usage:

  include_cycles.py ROOT FOLDER...   # e.g. include_cycles.py . planner

Prints every loop (a strongly connected set of modules) with the include lines that close it; exit 1 if any.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_EXTENSIONS = (".h", ".cc")


def modules(root, folders):
    """{module: [(file, line_number, included_module)]} for every source file under `folders`."""
    graph = {}
    files = []
    for folder in folders:
        top = os.path.join(root, folder)
        if not os.path.isdir(top):
            sys.exit(f"include_cycles: no folder {folder!r} under {root!r}")
        for dirpath, _, names in os.walk(top):
            for name in sorted(names):
                if name.endswith(SOURCE_EXTENSIONS):
                    files.append(os.path.relpath(os.path.join(dirpath, name), root))
    known = {os.path.splitext(f)[0] for f in files}
    for f in sorted(files):
        module = os.path.splitext(f)[0]
        edges = graph.setdefault(module, [])
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as src:
            for number, line in enumerate(src, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = os.path.splitext(os.path.normpath(m.group(1)))[0]
                if target in known and target != module:
                    edges.append((f, number, target))
    return graph


def loops(graph):
    """Strongly connected sets of more than one module (Tarjan, iterative so deep graphs cannot overflow)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = sorted({t for _, _, t in graph.get(node, [])})
            if i < len(targets):
                work.append((node, i + 1))
                t = targets[i]
                if t not in index:
                    work.append((t, 0))
                elif t in on_stack:
                    low[node] = min(low[node], index[t])
                continue
            if low[node] == index[node]:
                members = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    members.append(m)
                    if m == node:
                        break
                if len(members) > 1:
                    found.append(sorted(members))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    root, folders = argv[1], argv[2:]
    graph = modules(root, folders)
    found = loops(graph)
    for members in found:
        inside = set(members)
        print(f"include loop between {len(members)} modules: {' '.join(members)}")
        for m in members:
            for f, number, target in graph[m]:
                if target in inside:
                    print(f"  {f}:{number} includes {target}")
    if found:
        print(f"include_cycles: {len(found)} loop(s) in {' '.join(folders)}; split a header so the arrows run one way")
        return 1
    print(f"include_cycles: no loops among {len(graph)} modules in {' '.join(folders)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
