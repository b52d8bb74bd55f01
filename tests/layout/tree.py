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
