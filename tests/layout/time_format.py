#!/usr/bin/env python3
"""Fails when C++ code outside base/time_format.cc spells the RFC 3339 layout itself.

Kubernetes timestamps are formatted and parsed by base::FormatTime, base::FormatMicroTime and base::ParseTime
(base/time_format.h), so that every process writes and accepts the same text. A line that names absl's RFC 3339
constants (absl::RFC3339_full, absl::RFC3339_sec) or a "%Y-%m-%d" format elsewhere is a second copy. Usage:

  time_format.py ROOT

ALLOWED lists the files that may, each with its reason.
"""
import re
import sys

from tree import checkout_files

HELPER = "base/time_format.cc"
ALLOWED = {
    # The log line's "ts" field has milliseconds: a log format, not a Kubernetes timestamp.
    "base/log.cc": "log timestamps in milliseconds",
}
PATTERN = re.compile(r"RFC3339_|%Y-%m-%d")
NOT_SOURCE = re.compile(r"(^|/)(testdata|fuzz_corpus|third_party)/")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: time_format.py ROOT")
    root = sys.argv[1]
    found = []
    for path in checkout_files(root, "time_format"):
        if not path.endswith((".cc", ".h")) or NOT_SOURCE.search(path) or path == HELPER or path in ALLOWED:
            continue
        with open(f"{root}/{path}", encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                if PATTERN.search(line):
                    found.append(f"{path}:{n}: spells the RFC 3339 layout; call base::FormatTime, "
                                 f"base::FormatMicroTime or base::ParseTime (base/time_format.h): {line.strip()}")
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
