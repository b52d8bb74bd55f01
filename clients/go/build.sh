#!/usr/bin/env bash
# clients/go/build.sh OUT_DIR: the Go planner client as a module ready to use in OUT_DIR: this directory's sources
# plus package plannerv1 generated from proto/planner.proto by protoc with protoc-gen-go and protoc-gen-go-grpc
# (pinned by tools/go/protocgen, built once by `./run tool`), compiled and vetted, and the test and example binaries
# the ctests run (OUT_DIR/bin/client.test, OUT_DIR/bin/rollout-example). CMake runs it (target client_go) whenever
# the proto, a source or a pin changes; the generated code is never committed. A missing protoc or Go is a failure.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${1:?usage: clients/go/build.sh OUT_DIR}"
# The Go of /usr/local/go first: Debian's go (1.19 on Debian 12) cannot read a `go 1.24` module.
[ ! -x /usr/local/go/bin/go ] || export PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || { echo "clients/go: no Go toolchain (need Go 1.24 or later on PATH)" >&2; exit 1; }
go_minor=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
[ "${go_minor:-0}" -ge 24 ] ||
  { echo "clients/go: $(command -v go) is $(go env GOVERSION); need Go 1.24 or later" >&2; exit 1; }
command -v protoc >/dev/null || { echo "clients/go: no protoc (Debian package protobuf-compiler, ./run deps)" >&2; exit 1; }
gen_go=$("$ROOT/run" tool protocgen google.golang.org/protobuf/cmd/protoc-gen-go)
gen_grpc=$("$ROOT/run" tool protocgen google.golang.org/grpc/cmd/protoc-gen-go-grpc)

# Built beside OUT and moved into place at the end, so a failed build never leaves a half-generated module.
tmp="$OUT.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/plannerv1" "$tmp/bin"
tar -C "$HERE" --exclude=./plannerv1 --exclude=./build.sh --exclude=./CMakeLists.txt -cf - . | tar -C "$tmp" -xf -
import="cloneset.dev/planner/plannerv1"
protoc -I "$ROOT/proto" \
  --plugin=protoc-gen-go="$gen_go" --plugin=protoc-gen-go-grpc="$gen_grpc" \
  --go_out="$tmp/plannerv1" --go_opt=paths=source_relative --go_opt=Mplanner.proto="$import" \
  --go-grpc_out="$tmp/plannerv1" --go-grpc_opt=paths=source_relative --go-grpc_opt=Mplanner.proto="$import" \
  "$ROOT/proto/planner.proto"
(
  cd "$tmp"
  # go.sum is the lock: -mod=readonly fails instead of changing it, and modules come from the module cache
  # (outside the repository), downloaded once.
  export GOFLAGS="-mod=readonly -buildvcs=false"
  go vet ./...
  go test -c -o bin/client.test .
  go build -o bin/ ./cmd/...
)
rm -rf "$OUT"
mv "$tmp" "$OUT"
