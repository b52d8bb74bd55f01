#!/usr/bin/env bash
# The layout checks must fail on what they forbid: an include loop (x.cc -> y.h, y.h -> x.h) and a long file
# without a "Size:" reason; and pass once the loop is gone or the reason is written.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v git >/dev/null || { echo "layout_selftest: git is needed (file_size.py lists files with it)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "layout_selftest: $*" >&2; exit 1; }

# Include loops: the .h and .cc of a name are one module.
mkdir -p "$tmp/inc/lib"
printf '#pragma once\n' > "$tmp/inc/lib/x.h"
printf '#include "lib/x.h"\n#include "lib/y.h"\n' > "$tmp/inc/lib/x.cc"
printf '#pragma once\n#include "lib/x.h"\n#include <vector>\n' > "$tmp/inc/lib/y.h"
if out=$(python3 "$here/include_cycles.py" "$tmp/inc" lib); then fail "a loop x <-> y passed: $out"; fi
grep -q 'include loop between 2 modules: lib/x lib/y' <<<"$out" || fail "loop not named: $out"
grep -q 'lib/y.h:2 includes lib/x' <<<"$out" || fail "closing include not listed: $out"
printf '#pragma once\n#include <vector>\n' > "$tmp/inc/lib/y.h"
out=$(python3 "$here/include_cycles.py" "$tmp/inc" lib) || fail "no loop, still failed: $out"

# Long files.
git -C "$tmp" init -q size
seq 601 | sed 's|^|// line |' > "$tmp/size/long.cc"
seq 600 | sed 's|^|// line |' > "$tmp/size/short.cc"
if out=$(python3 "$here/file_size.py" "$tmp/size"); then fail "a 601-line file without a reason passed: $out"; fi
grep -q 'TOO LONG   601 long.cc' <<<"$out" || fail "long file not named: $out"
grep -q 'short.cc' <<<"$out" && fail "a 600-line file was reported: $out"
{ echo '// Size: one table of cases, read top to bottom'; cat "$tmp/size/long.cc"; } > "$tmp/size/long2.cc"
mv "$tmp/size/long2.cc" "$tmp/size/long.cc"
out=$(python3 "$here/file_size.py" "$tmp/size") || fail "a long file with a reason failed: $out"
echo "layout_selftest: ok"
