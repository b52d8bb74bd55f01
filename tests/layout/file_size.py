#!/usr/bin/env python3
"""Fails when a source file is longer than the limit and does not say why at its top.

A file over LIMIT lines must carry, within its first HEAD lines, a comment line starting with "Size:" (after the
language's comment marker: `// Size: ...` in C++, `# Size: ...` in scripts) that gives the reason it is kept
whole. Usage:

  file_size.py ROOT [--limit N]

Source files are the tracked and untracked-but-not-ignored files of ROOT's git checkout with the extensions below;
the test data folders and generated files ("// Code generated ... DO NOT EDIT.") are not source.
"""
import argparse
import os
import re
import sys

from tree import checkout_files

EXTENSIONS = (".cc", ".h", ".py", ".sh", ".proto", ".go")
HEAD = 15
REASON = re.compile(r"^\s*(//|#)\s*Size:\s*\S")
# Generated files say so in their head (the Go convention, which protoc's plugins follow): nobody edits them.
GENERATED = re.compile(r"^// Code generated .* DO NOT EDIT\.$")
NOT_SOURCE = re.compile(r"(^|/)(testdata|fuzz_corpus|data)/")


def source_files(root):
    for path in checkout_files(root, "file_size"):
        if path.endswith(EXTENSIONS) and not NOT_SOURCE.search(path):
            yield path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--limit", type=int, default=600)
    args = parser.parse_args()
    unexplained, explained = [], []
    for path in source_files(args.root):
        with open(os.path.join(args.root, path), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        if len(lines) <= args.limit or any(GENERATED.match(l.rstrip("\n")) for l in lines[:40]):
            continue
        (explained if any(REASON.match(l) for l in lines[:HEAD]) else unexplained).append((len(lines), path))
    for n, path in sorted(explained, reverse=True):
        print(f"ok       {n:5d} {path} (reason at its top)")
    for n, path in sorted(unexplained, reverse=True):
        print(f"TOO LONG {n:5d} {path}: over {args.limit} lines and no '// Size: <reason>' line in its first {HEAD}"
              " lines; split it by concern or write why it stays whole")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
