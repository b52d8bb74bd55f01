#!/usr/bin/env python3
"""The README's folder table names every top-level folder of the repository.

A newcomer reads the README first; a folder it does not list is one they cannot place. A folder counts when it
holds a tracked file (`git ls-files`), or, outside a git checkout, when it is a directory not ignored by the
repository's .gitignore (build trees, the run directory) and not hidden. A table row names folders as `name/` in its
first cell. Also the other way round: a row naming a folder that does not exist fails.

Usage: readme_folders.py SOURCE_DIR
"""
import os
import re
import subprocess
import sys


def top_level_folders(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True, text=True).stdout
        return {line.split("/", 1)[0] for line in out.splitlines() if "/" in line}
    except (OSError, subprocess.CalledProcessError):
        ignored = re.compile(r"^(build|build-.*|\.run)$")
        return {d for d in os.listdir(root)
                if os.path.isdir(os.path.join(root, d)) and not d.startswith(".") and not ignored.match(d)}


def readme_folders(text):
    named = set()
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        first_cell = line.split("|")[1]
        for name in re.findall(r"`([A-Za-z0-9_][A-Za-z0-9_.-]*)/[^`]*`", first_cell):
            named.add(name)
    return named


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    folders = {f for f in top_level_folders(root) if not f.startswith(".")}
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        named = readme_folders(f.read())
    missing = sorted(folders - named)
    stale = sorted(named - folders)
    for m in missing:
        print(f"README.md: the folder table does not list `{m}/`", file=sys.stderr)
    for s in stale:
        print(f"README.md: the folder table lists `{s}/`, which is not a folder of the repository", file=sys.stderr)
    if missing or stale:
        return 1
    print(f"README.md lists all {len(folders)} top-level folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
