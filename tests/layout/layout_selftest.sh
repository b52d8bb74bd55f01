#!/usr/bin/env bash
# The layout checks must fail on what they forbid: an include loop (x.cc -> y.h, y.h -> x.h), a long file without a
# "Size:" reason, a section reference that resolves to nothing, a task code in a comment, and an executor target that
# links or includes the planner's implementation (directly or through the planner's client library), a product
# binary (the product CLI clonesetctl among them) that links or includes tooling (tools/, tests/),
# a rule-table row naming a function that does not exist, a second copy of the RFC 3339 timestamp layout, a README
# folder table that misses a folder, a work-item reference, a docs/ path the tree lacks, an "apps.kruise.io/"
# literal outside kruise/, a label selector operator outside common/label_selector.cc, a /metrics server on
# prometheus-cpp's Exposer; and pass once each is mended.
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
# Section references: a "§" with no heading, a quoted phrase not in its section, an appendix that does not exist,
# a task code in a comment; then the same tree with each mended.
git -C "$tmp" init -q refs
mkdir -p "$tmp/refs/docs" "$tmp/refs/lib"
printf '# Semantics\n## 4. Scale\n### 4.1 The diff\nParameters: R.\n## 5. Update\n' > "$tmp/refs/docs/semantics.md"
printf '// Diff (semantics §4.1 "Parameters"), scale §4, update §5.\n' > "$tmp/refs/lib/ok.cc"
printf '// Completion (semantics §5.9).\n' > "$tmp/refs/lib/bad.cc"
out=$(python3 "$here/section_refs.py" "$tmp/refs") && fail "a reference to a missing §5.9 passed: $out"
grep -q "lib/bad.cc:1: §5.9 has no heading '5.9' in docs/semantics.md" <<<"$out" || fail "missing § not named: $out"
printf '// The diff (§4.1 "Surge"), see semantics Appendix A.\nint x;  // done in (d2)\n' > "$tmp/refs/lib/bad.cc"
out=$(python3 "$here/section_refs.py" "$tmp/refs") && fail "a wrong phrase, appendix and task code passed: $out"
grep -q 'lib/bad.cc:1: §4.1 "Surge": the phrase is not in docs/semantics.md 4.1' <<<"$out" || fail "phrase: $out"
grep -q "lib/bad.cc:1: Appendix A has no heading 'Appendix A'" <<<"$out" || fail "appendix not named: $out"
grep -q "lib/bad.cc:2: task code '(d2)'" <<<"$out" || fail "task code not named: $out"
printf '// The diff (§4.1 "Parameters").\nint x;  // done in (x + 2)\n' > "$tmp/refs/lib/bad.cc"
out=$(python3 "$here/section_refs.py" "$tmp/refs") || fail "resolving references failed: $out"

# The executor's boundary: a target under executor/ that links a library defined under planner/, or compiles a
# source that includes a planner/ header (here through a header of its own), fails; the wire proto does not.
mkdir -p "$tmp/eb/executor" "$tmp/eb/planner" "$tmp/eb/proto"
printf 'add_library(planner_proto STATIC planner.cc)\n' > "$tmp/eb/proto/CMakeLists.txt"
printf 'add_library(planner_core STATIC plan.cc)\n' > "$tmp/eb/planner/CMakeLists.txt"
printf '#pragma once\n' > "$tmp/eb/planner/plan.h"
printf '#include "executor/apply.h"\n#include "cloneset/planner/v1/planner.pb.h"\n' > "$tmp/eb/executor/apply.cc"
printf '#pragma once\n#include "planner/plan.h"\n' > "$tmp/eb/executor/apply.h"
printf 'add_library(executor_core STATIC apply.cc)\ntarget_link_libraries(executor_core PUBLIC planner_proto\n  PRIVATE planner_core)  # a comment\n' > "$tmp/eb/executor/CMakeLists.txt"
out=$(python3 "$here/executor_boundary.py" "$tmp/eb") && fail "an executor linking planner_core passed: $out"
grep -q 'LINK     planner_core (defined in planner/) is linked by executor_core' <<<"$out" || fail "link: $out"
grep -q 'INCLUDE  executor/apply.h:2 includes planner/plan.h' <<<"$out" || fail "include not named: $out"
printf 'add_library(executor_core STATIC apply.cc)\ntarget_link_libraries(executor_core PUBLIC planner_proto)\n' > "$tmp/eb/executor/CMakeLists.txt"
printf '#pragma once\n' > "$tmp/eb/executor/apply.h"
out=$(python3 "$here/executor_boundary.py" "$tmp/eb") || fail "an executor on the wire proto only failed: $out"
# The planner's client library (planner/client/) is the executor's way to the planner: linking it passes, and it is
# followed like any library: a client that includes or links the planner's implementation fails the executor.
mkdir -p "$tmp/eb/planner/client"
printf 'add_library(planner_client STATIC client.cc)\ntarget_link_libraries(planner_client PUBLIC planner_proto)\n' > "$tmp/eb/planner/client/CMakeLists.txt"
printf '#include "planner/client/client.h"\n' > "$tmp/eb/planner/client/client.cc"
printf '#pragma once\n#include "cloneset/planner/v1/planner.pb.h"\n' > "$tmp/eb/planner/client/client.h"
printf '#include "executor/apply.h"\n#include "planner/client/client.h"\n' > "$tmp/eb/executor/apply.cc"
printf 'add_library(executor_core STATIC apply.cc)\ntarget_link_libraries(executor_core PUBLIC planner_client)\n' > "$tmp/eb/executor/CMakeLists.txt"
out=$(python3 "$here/executor_boundary.py" "$tmp/eb") || fail "an executor on the planner's client failed: $out"
printf '#pragma once\n#include "planner/plan.h"\n' > "$tmp/eb/planner/client/client.h"
printf 'add_library(planner_client STATIC client.cc)\ntarget_link_libraries(planner_client PUBLIC planner_core)\n' > "$tmp/eb/planner/client/CMakeLists.txt"
out=$(python3 "$here/executor_boundary.py" "$tmp/eb") && fail "a client reaching planner_core passed: $out"
grep -q 'LINK     planner_core (defined in planner/) is linked by planner_client' <<<"$out" || fail "link via client: $out"
grep -q 'INCLUDE  planner/client/client.h:2 includes planner/plan.h' <<<"$out" || fail "include via client: $out"
# The product boundary: a product binary whose library links a target defined under tools/, or whose source
# includes a tests/ header through a header of its own, fails; one that uses base/ passes.
mkdir -p "$tmp/pb/base" "$tmp/pb/tools/cli" "$tmp/pb/tests/support" "$tmp/pb/planner/service" "$tmp/pb/executor" \
  "$tmp/pb/agent" "$tmp/pb/devcluster" "$tmp/pb/clonesetctl"
printf 'add_library(base STATIC log.cc)\n' > "$tmp/pb/base/CMakeLists.txt"
printf 'add_library(cli_help STATIC help.cc)\n' > "$tmp/pb/tools/cli/CMakeLists.txt"
printf '#pragma once\n' > "$tmp/pb/tests/support/fake.h"
printf 'add_library(planner_service STATIC service.cc)\ntarget_link_libraries(planner_service PUBLIC base\n  PRIVATE cli_help)\nadd_executable(cloneset-planner main.cc)\ntarget_link_libraries(cloneset-planner PRIVATE planner_service)\n' \
  > "$tmp/pb/planner/service/CMakeLists.txt"
printf '#include "planner/service/service.h"\n' > "$tmp/pb/planner/service/main.cc"
printf '#pragma once\n#include "tests/support/fake.h"\n' > "$tmp/pb/planner/service/service.h"
for d in executor agent devcluster; do printf 'add_executable(cloneset-%s main.cc)\ntarget_link_libraries(cloneset-%s PRIVATE base)\n' $d $d > "$tmp/pb/$d/CMakeLists.txt"; done
printf 'add_executable(clonesetctl main.cc)\ntarget_link_libraries(clonesetctl PRIVATE base)\n' > "$tmp/pb/clonesetctl/CMakeLists.txt"
out=$(python3 "$here/product_boundary.py" "$tmp/pb") && fail "a planner linking cli_help passed: $out"
grep -q 'LINK     cli_help (defined in tools/cli/) is linked by planner_service' <<<"$out" || fail "link: $out"
grep -q 'INCLUDE  planner/service/service.h:2 includes tests/support/fake.h' <<<"$out" || fail "include: $out"
printf 'add_library(planner_service STATIC service.cc)\ntarget_link_libraries(planner_service PUBLIC base)\nadd_executable(cloneset-planner main.cc)\ntarget_link_libraries(cloneset-planner PRIVATE planner_service)\n' \
  > "$tmp/pb/planner/service/CMakeLists.txt"
printf '#pragma once\n' > "$tmp/pb/planner/service/service.h"
out=$(python3 "$here/product_boundary.py" "$tmp/pb") || fail "a planner on base/ only failed: $out"
# The product CLI is a product too: a clonesetctl whose library links a tools/ target (the demo, say) or whose source
# includes a tools/ header fails, and passes once the demo is its own tool that links the CLI, not the other way.
mkdir -p "$tmp/pb/tools/demo"
printf 'add_library(demo_core STATIC demo.cc)\nadd_executable(cloneset-demo main.cc)\ntarget_link_libraries(cloneset-demo PRIVATE demo_core clonesetctl_core)\n' > "$tmp/pb/tools/demo/CMakeLists.txt"
printf '#pragma once\n' > "$tmp/pb/tools/demo/demo.h"
printf 'add_library(clonesetctl_core STATIC live.cc)\ntarget_link_libraries(clonesetctl_core PUBLIC base demo_core)\nadd_executable(clonesetctl main.cc)\ntarget_link_libraries(clonesetctl PRIVATE clonesetctl_core)\n' > "$tmp/pb/clonesetctl/CMakeLists.txt"
printf '#include "tools/demo/demo.h"\n' > "$tmp/pb/clonesetctl/main.cc"
out=$(python3 "$here/product_boundary.py" "$tmp/pb") && fail "a clonesetctl linking the demo passed: $out"
grep -q 'LINK     demo_core (defined in tools/demo/) is linked by clonesetctl_core' <<<"$out" || fail "ctl link: $out"
grep -q 'INCLUDE  clonesetctl/main.cc:1 includes tools/demo/demo.h' <<<"$out" || fail "ctl include: $out"
printf 'add_library(clonesetctl_core STATIC live.cc)\ntarget_link_libraries(clonesetctl_core PUBLIC base)\nadd_executable(clonesetctl main.cc)\ntarget_link_libraries(clonesetctl PRIVATE clonesetctl_core)\n' > "$tmp/pb/clonesetctl/CMakeLists.txt"
printf 'int main() { return 0; }\n' > "$tmp/pb/clonesetctl/main.cc"
out=$(python3 "$here/product_boundary.py" "$tmp/pb") || fail "a clonesetctl beside its demo failed: $out"
# The rule table: a function the named file neither declares nor defines (only calls) fails.
mkdir -p "$tmp/rt/docs" "$tmp/rt/lib"
printf '#pragma once\nint Scale();\n' > "$tmp/rt/lib/scale.h"
printf 'int Local() { return 1; }\nint Scale() {\n  return Diff();\n}\n' > "$tmp/rt/lib/scale.cc"
printf '# A\n## 4. Where each rule lives\n| rule | where | process |\n|---|---|---|\n| scale | `lib/scale.h` `Scale`, `Local`, `Diff` | planner |\n## 5. Next\n' > "$tmp/rt/docs/architecture.md"
out=$(python3 "$here/rule_table.py" "$tmp/rt") && fail "a function only called passed: $out"
grep -q 'scale: no Diff in lib/scale.h' <<<"$out" || fail "missing function not named: $out"
grep -q 'Local' <<<"$out" && fail "a function defined in the .cc was reported: $out"
sed -i 's/, `Diff`//' "$tmp/rt/docs/architecture.md"
out=$(python3 "$here/rule_table.py" "$tmp/rt") || fail "a table of existing functions failed: $out"
# The timestamp format: a second copy of the RFC 3339 layout outside base/time_format.cc fails, naming the line; the
# helper itself and base/log.cc's millisecond log stamp do not.
git -C "$tmp" init -q tf
mkdir -p "$tmp/tf/base" "$tmp/tf/lib"
printf 'std::string F(absl::Time t) { return absl::FormatTime("%%Y-%%m-%%dT%%H:%%M:%%SZ", t, absl::UTCTimeZone()); }\n' \
  > "$tmp/tf/base/time_format.cc"
cp "$tmp/tf/base/time_format.cc" "$tmp/tf/base/log.cc"
printf 'int x;\nbool ok = absl::ParseTime(absl::RFC3339_full, s, &t, &err);\n' > "$tmp/tf/lib/lease.cc"
out=$(python3 "$here/time_format.py" "$tmp/tf") && fail "a second RFC 3339 parse passed: $out"
grep -q 'lib/lease.cc:2: spells the RFC 3339 layout' <<<"$out" || fail "copy not named: $out"
grep -qE '^base/(log|time_format)\.cc:' <<<"$out" && fail "the helper or the log was reported: $out"
printf 'int x;\nauto t = base::ParseTime(s);\n' > "$tmp/tf/lib/lease.cc"
out=$(python3 "$here/time_format.py" "$tmp/tf") || fail "a caller of the helper failed: $out"
# The README's folder table: a tracked top-level folder it does not list fails, and so does a row naming a folder
# that does not exist; a `./run` cell is not a folder.
git -C "$tmp" init -q rf
mkdir -p "$tmp/rf/agent" "$tmp/rf/newlib"
touch "$tmp/rf/agent/a.cc" "$tmp/rf/newlib/b.cc" "$tmp/rf/README.md"
git -C "$tmp/rf" add -A
printf '| folder | what |\n|---|---|\n| `agent/` | the agent |\n| `gone/` | removed |\n| `./run demo` | the demo |\n' \
  > "$tmp/rf/README.md"
out=$(python3 "$here/readme_folders.py" "$tmp/rf" 2>&1) && fail "a README missing newlib/ passed: $out"
grep -q 'does not list `newlib/`' <<<"$out" || fail "missing folder not named: $out"
grep -q 'lists `gone/`, which is not a folder' <<<"$out" || fail "stale row not named: $out"
grep -q '`\./' <<<"$out" && fail "./run was taken for a folder: $out"
printf '| folder | what |\n|---|---|\n| `agent/`, `newlib/` | the agent and a library |\n' > "$tmp/rf/README.md"
out=$(python3 "$here/readme_folders.py" "$tmp/rf" 2>&1) || fail "a complete table failed: $out"
# Work items and docs/ paths: a line naming a work item (the word and a number, assembled here so that this file
# names none) or a docs/ file the tree lacks fails, naming the line; the same tree without them passes.
item="$(printf '%s%s %d' Sess ion $((3 + 4)))"
printf '// Added in %s for speed.\n// See docs/missing.md and docs/semantics.md.\n' "$item" > "$tmp/refs/lib/bad.cc"
out=$(python3 "$here/section_refs.py" "$tmp/refs") && fail "a work item and a missing docs/ path passed: $out"
grep -q "lib/bad.cc:1: work item '$item'" <<<"$out" || fail "work item not named: $out"
grep -q 'lib/bad.cc:2: docs/missing.md is not in the repository' <<<"$out" || fail "docs/ path not named: $out"
grep -q 'docs/semantics.md is not' <<<"$out" && fail "an existing docs/ file was reported: $out"
printf '// Added for speed.\n// See docs/semantics.md.\n' > "$tmp/refs/lib/bad.cc"
out=$(python3 "$here/section_refs.py" "$tmp/refs") || fail "a line without work items failed: $out"

# Kruise literals: an "apps.kruise.io/" string outside kruise/ fails, naming the line; kruise/ itself, tests and a
# comment naming one do not.
git -C "$tmp" init -q kl
mkdir -p "$tmp/kl/kruise" "$tmp/kl/lib"
printf 'inline constexpr char kLabel[] = "apps.kruise.io/x";\n' > "$tmp/kl/kruise/keys.h"
printf 'int x;\nconst char* k = "apps.kruise.io/x";\n' > "$tmp/kl/lib/pods.cc"
printf 'const char* k = "apps.kruise.io/x";\n' > "$tmp/kl/lib/pods_test.cc"
out=$(python3 "$here/kruise_literals.py" "$tmp/kl") && fail "a literal outside kruise/ passed: $out"
grep -q 'lib/pods.cc:2: ' <<<"$out" || fail "literal not named: $out"
grep -qE '^(kruise/keys.h|lib/pods_test.cc):' <<<"$out" && fail "kruise/ or a test was reported: $out"
printf 'int x;\nconst char* k = kruise::kLabel;  // "apps.kruise.io/x"\n' > "$tmp/kl/lib/pods.cc"
out=$(python3 "$here/kruise_literals.py" "$tmp/kl") || fail "a caller of the constant failed: $out"

# Label selectors: an operator spelled outside common/label_selector.cc (a second matcher, a second printer) fails,
# naming the line; the home, tests and comments do not.
git -C "$tmp" init -q ls
mkdir -p "$tmp/ls/common" "$tmp/ls/lib"
printf 'if (op == "NotIn") return !in;\n' > "$tmp/ls/common/label_selector.cc"
printf 'int x;\nif (r.op == "DoesNotExist") return !present;\nstd::string s = k + " notin (" + v + ")";\n' \
  > "$tmp/ls/lib/match.cc"
printf 'auto s = Sel("NotIn");\n' > "$tmp/ls/lib/match_test.cc"
out=$(python3 "$here/label_selectors.py" "$tmp/ls") && fail "a second selector matcher passed: $out"
grep -q 'lib/match.cc:2: ' <<<"$out" || fail "operator not named: $out"
grep -q 'lib/match.cc:3: ' <<<"$out" || fail "string form not named: $out"
grep -qE '^(common/label_selector.cc|lib/match_test.cc):' <<<"$out" && fail "the home or a test was reported: $out"
printf 'int x;\nreturn selector.Matches(labels);  // NotIn, DoesNotExist: common::LabelSelector\n' > "$tmp/ls/lib/match.cc"
out=$(python3 "$here/label_selectors.py" "$tmp/ls") || fail "a caller of common::LabelSelector failed: $out"

# HTTP endpoints: including prometheus/exposer.h, naming prometheus::Exposer or linking prometheus-cpp::pull fails,
# naming the line; base::EndpointServer and a comment naming the Exposer do not.
git -C "$tmp" init -q he
mkdir -p "$tmp/he/lib"
printf '#include "prometheus/exposer.h"\nint x;\nauto e = std::make_unique<prometheus::Exposer>(listen);\n' \
  > "$tmp/he/lib/main.cc"
printf 'add_executable(d main.cc)\n# prometheus-cpp::pull is gone\ntarget_link_libraries(d PRIVATE prometheus-cpp::pull)\n' \
  > "$tmp/he/lib/CMakeLists.txt"
out=$(python3 "$here/http_endpoints.py" "$tmp/he") && fail "a /metrics server on the Exposer passed: $out"
grep -q 'lib/main.cc:1: #include "prometheus/exposer.h"' <<<"$out" || fail "include not named: $out"
grep -q 'lib/main.cc:3: ' <<<"$out" || fail "prometheus::Exposer not named: $out"
grep -q 'lib/CMakeLists.txt:3: ' <<<"$out" || fail "link not named: $out"
grep -q 'lib/CMakeLists.txt:2: ' <<<"$out" && fail "a CMake comment was reported: $out"
printf '#include "base/endpoints.h"\nint x;  // was prometheus::Exposer\nauto e = base::EndpointServer::Start(o);\n' \
  > "$tmp/he/lib/main.cc"
printf 'add_executable(d main.cc)\ntarget_link_libraries(d PRIVATE base prometheus-cpp::core)\n' > "$tmp/he/lib/CMakeLists.txt"
out=$(python3 "$here/http_endpoints.py" "$tmp/he") || fail "a daemon on base::EndpointServer failed: $out"
echo "layout_selftest: ok"
