"""The files of a checkout that the layout checks read: git's tracked and untracked-but-not-ignored files, so that
build folders and ignored outputs never count, and a new file counts before it is committed."""
import os
import subprocess
import sys


def checkout_files(root, check):
    """Every such file under `root` (relative paths, sorted) that exists; `check` names the caller in the error
    when `root` is not a git checkout."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                             check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"{check}: {root} is not a git checkout ({e}); the check lists files with git")
    for path in sorted(set(out.decode().split("\0"))):
        if path and os.path.isfile(os.path.join(root, path)):
            yield path


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


def cpp_lines_matching(root, check, pattern, skip):
    """"path:line: text" for every line of code (comments left out) of the checkout's C++ files (.cc, .h) that
    `pattern` finds, in files for which `skip(path)` is false."""
    problems = []
    for path in checkout_files(root, check):
        if not path.endswith((".cc", ".h")) or skip(path):
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if pattern.search(code_part(line)):
                    problems.append(f"{path}:{number}: {line.strip()}")
    return problems


def line_check_main(argv, usage, check, refused, passed):
    """The command line of a check that refuses lines: `argv` is [script, ROOT]; prints every line `check(ROOT)`
    finds, then `refused(count)` and exits 1, or `passed` and exits 0 when it finds none (2 on a bad command line,
    with `usage`)."""
    if len(argv) != 2:
        print(usage, file=sys.stderr)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(refused(len(problems)))
        return 1
    print(passed)
    return 0
