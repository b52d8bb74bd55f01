#!/usr/bin/env python3
"""Fails when the executor reaches into the planner's implementation.

The executor talks to the planner over gRPC only: it depends on the wire contract (proto/planner.proto, the
generated cloneset/planner/v1/planner.pb.h), on the planner's client library (planner/client/: the API's client,
not its implementation) and on planapi/, never on the planner's code (docs/architecture.md, "Contracts"). Two
measures, both from the sources so that no build is needed:

  * link: the libraries cloneset-executor links, followed through every target_link_libraries of the tree's
    CMake files, include no target defined under planner/ (planner_core, planner_service, ...) but planner/client/;
  * include: the sources of those libraries and of the binary, and every header of the tree they include,
    directly or not, include no "planner/..." header but planner/client/'s.

The client library is followed like any other: if it linked or included the planner's implementation, the
executor would reach it through the client, and the check fails.

Usage: executor_boundary.py ROOT [TARGET...]

The default targets are every library, binary and test defined under executor/ (cloneset-executor, executor_core,
the executor's tests), except the reconcile benchmark (EXEMPT below).
"""
import os
import re
import sys

COMMAND = re.compile(
    r"\b(add_library|add_executable|cloneset_test|target_link_libraries|target_sources|set)\s*\(([^()]*)\)", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
KEYWORDS = {"PUBLIC", "PRIVATE", "INTERFACE", "STATIC", "SHARED", "OBJECT", "MODULE", "EXCLUDE_FROM_ALL",
            "IMPORTED", "GLOBAL", "ALIAS"}
FORBIDDEN_DIR = "planner"
# The part of planner/ that is the API's client, which the executor calls the planner through.
ALLOWED_DIRS = ("planner/client",)
# Targets of executor/ that are not the executor: the reconcile benchmark runs the planner in process beside the
# wire call, to measure what the wire costs (docs/performance.md).
EXEMPT = {"reconcile_bench"}


def cmake_files(root):
    for dirpath, dirnames, names in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        top = rel.split(os.sep)[0]
        if rel != "." and (top.startswith(".") or top.startswith("build") or "node_modules" in rel.split(os.sep)):
            dirnames[:] = []
            continue
        for name in names:
            if name == "CMakeLists.txt" or name.endswith(".cmake"):
                yield os.path.join(dirpath, name)


def parse(root):
    """({target: defining folder}, {target: [linked names]}, {target: [source paths relative to root]})."""
    defined, links, sources, variables = {}, {}, {}, {}
    for path in sorted(cmake_files(root)):
        folder = os.path.relpath(os.path.dirname(path), root)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = re.sub(r"#[^\n]*", "", f.read())
        for command, args in COMMAND.findall(text):
            words = args.split()
            if not words:
                continue
            expanded = []
            for w in words[1:]:
                m = re.fullmatch(r"\$\{(\w+)\}", w)
                expanded.extend(variables.get(m.group(1), []) if m else [w])
            name, rest = words[0], [w for w in expanded if w not in KEYWORDS]
            if command == "set":
                variables[name] = rest
            elif command == "cloneset_test":  # cloneset_test(NAME SOURCES files... DEPS libs... LABELS ...)
                defined.setdefault(name, folder)
                part = None
                for w in rest:
                    if w in ("SOURCES", "DEPS", "LABELS", "TIMEOUT"):
                        part = w
                    elif part == "SOURCES":
                        sources.setdefault(name, []).append(os.path.normpath(os.path.join(folder, w)))
                    elif part == "DEPS":
                        links.setdefault(name, []).append(w)
            elif command in ("add_library", "add_executable"):
                defined.setdefault(name, folder)
                sources.setdefault(name, []).extend(
                    os.path.normpath(os.path.join(folder, w)) for w in rest if w.endswith((".cc", ".h")))
            elif command == "target_sources":
                sources.setdefault(name, []).extend(
                    os.path.normpath(os.path.join(folder, w)) for w in rest if w.endswith((".cc", ".h")))
            else:
                links.setdefault(name, []).extend(rest)
    return defined, links, sources


def closure(targets, defined, links):
    seen, stack = [], list(targets)
    while stack:
        t = stack.pop()
        if t in seen or t not in defined:
            continue
        seen.append(t)
        stack.extend(links.get(t, []))
    return seen


def under(path, folders):
    """Whether `path` (relative to the root) is one of `folders` or inside one."""
    return any(path == f or path.startswith(f + os.sep) for f in folders)


def forbidden_path(path, forbidden, allowed):
    """Whether `path` is under one of the `forbidden` top-level folders and not under one of the `allowed` ones."""
    return path.split(os.sep)[0] in forbidden and not under(path, allowed)


def forbidden_includes(root, files, forbidden, allowed=()):
    """[(file, line, included)] for every include of a header under one of the `forbidden` top-level folders (and
    not under an `allowed` folder) reachable from `files` through the tree's headers."""
    found, seen, stack = [], set(), list(files)
    while stack:
        f = stack.pop()
        if f in seen or not os.path.isfile(os.path.join(root, f)):
            continue
        seen.add(f)
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as src:
            text = src.read()
        for m in INCLUDE.finditer(text):
            inc = os.path.normpath(m.group(1))
            if forbidden_path(inc, forbidden, allowed):
                found.append((f, text.count("\n", 0, m.start()) + 1, inc))
            stack.append(inc)
    return found


def report(root, targets, defined, links, sources, forbidden, allowed=()):
    """Prints a LINK line for every target defined under a `forbidden` top-level folder (and not under an `allowed`
    folder) that `targets` link, directly or not, and an INCLUDE line for every such header their sources reach.
    Returns (anything found, the targets reached, their sources)."""
    reached = closure(targets, defined, links)
    bad_links = [t for t in reached if forbidden_path(defined[t], forbidden, allowed)]
    files = sorted({s for t in reached for s in sources.get(t, [])})
    bad_includes = forbidden_includes(root, files, forbidden, allowed)
    for t in bad_links:
        chain = [p for p in reached if t in links.get(p, [])]
        print(f"LINK     {t} (defined in {defined[t]}/) is linked by {' '.join(chain)}")
    for f, line, inc in bad_includes:
        print(f"INCLUDE  {f}:{line} includes {inc}")
    return bool(bad_links or bad_includes), reached, files


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    defined, links, sources = parse(root)
    targets = argv[2:] or sorted(t for t, folder in defined.items()
                                 if folder.split(os.sep)[0] == "executor" and t not in EXEMPT)
    missing = [t for t in targets if t not in defined]
    if missing:
        print(f"executor_boundary: no target {' '.join(missing)} in the CMake files under {root}")
        return 1
    found, reached, files = report(root, targets, defined, links, sources, (FORBIDDEN_DIR,), ALLOWED_DIRS)
    if found:
        print(f"executor_boundary: {' '.join(targets)} reaches the planner's implementation; depend on the wire "
              "contract (planner_proto), the planner's client (planner/client/) and planapi/ instead")
        return 1
    print(f"executor_boundary: {len(targets)} targets ({' '.join(targets)}) link {len(reached)} of the tree's targets and compiles "
          f"{len(files)} sources, none of them the planner's "
          "implementation")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
