#!/usr/bin/env python3
"""Fails when code serves Prometheus metrics with prometheus-cpp's Exposer (its pull library, civetweb).

The daemons answer /metrics, /healthz and /readyz from one HTTP server, base::EndpointServer (base/endpoints.h, on
cpp-httplib): a second server for /metrics brings back civetweb's threads, a second listener per process and a
second set of request limits to keep right. So no C++ file includes "prometheus/exposer.h" or names
prometheus::Exposer, and no CMake file links prometheus-cpp::pull; comments may name them. Usage:

  http_endpoints.py ROOT

Prints every such line with its file and line number; exit 1 if any.
"""
import os
import re
import sys

from tree import checkout_files, cpp_lines_matching, line_check_main

CPP = re.compile(r'prometheus/exposer\.h|\bprometheus::Exposer\b')
CMAKE = re.compile(r'\bprometheus-cpp::pull\b')


def cmake_lines(root):
    problems = []
    for path in checkout_files(root, "http_endpoints"):
        if os.path.basename(path) != "CMakeLists.txt" and not path.endswith(".cmake"):
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if CMAKE.search(line.split("#", 1)[0]):
                    problems.append(f"{path}:{number}: {line.strip()}")
    return problems


def check(root):
    return cpp_lines_matching(root, "http_endpoints", CPP, lambda path: False) + cmake_lines(root)


def main(argv):
    return line_check_main(
        argv, __doc__, check,
        lambda count: f"http_endpoints: {count} use(s) of prometheus-cpp's Exposer or its pull library; serve /metrics "
                      "with base::EndpointServer (base/endpoints.h) instead",
        "http_endpoints: /metrics is served by base::EndpointServer alone (no prometheus::Exposer, no "
        "prometheus-cpp::pull)")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
