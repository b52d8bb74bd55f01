#!/usr/bin/env bash
# clients/typescript/build.sh OUT_DIR: the TypeScript planner client built in OUT_DIR: this directory's sources,
# src/gen/planner_pb.ts generated from proto/planner.proto by protoc with protoc-gen-es, compiled by tsc into
# OUT_DIR/dist (the package, its test and its example). The npm packages of package-lock.json (exact versions) are
# installed once with `npm ci` into ~/.cache/cloneset/npm/<hash of package.json and package-lock.json>/ and linked,
# so a second build downloads nothing and a changed lock installs anew. CMake runs it (target client_ts) whenever
# the proto, a source or the lock changes; nothing of it is committed. A missing node, npm or protoc is a failure.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${1:?usage: clients/typescript/build.sh OUT_DIR}"
for tool in node npm protoc; do
  command -v "$tool" >/dev/null ||
    { echo "clients/typescript: no $tool on PATH (Debian packages nodejs, npm, protobuf-compiler; ./run deps)" >&2; exit 1; }
done
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || { echo "clients/typescript: node $(node --version) is too old (need 20 or later)" >&2; exit 1; }

key=$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -c1-16)
cache="${CLONESET_NPM_CACHE:-$HOME/.cache/cloneset/npm}/typescript-$key"
if [ ! -d "$cache/node_modules" ]; then
  echo "clients/typescript: installing the npm packages of package-lock.json once into $cache" >&2
  mkdir -p "$(dirname "$cache")"
  tmp_cache=$(mktemp -d "$cache.XXXXXX")
  cp "$HERE/package.json" "$HERE/package-lock.json" "$tmp_cache/"
  (cd "$tmp_cache" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) >&2 ||
    { rm -rf "$tmp_cache"; echo "clients/typescript: npm ci failed" >&2; exit 1; }
  # Another build may have won the race: keep its copy.
  mv -T "$tmp_cache" "$cache" 2>/dev/null || rm -rf "$tmp_cache"
fi

tmp="$OUT.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/src/gen"
tar -C "$HERE" --exclude=./node_modules --exclude=./dist --exclude=./src/gen --exclude=./build.sh \
  --exclude=./CMakeLists.txt -cf - . | tar -C "$tmp" -xf -
ln -s "$cache/node_modules" "$tmp/node_modules"
protoc -I "$ROOT/proto" --plugin=protoc-gen-es="$cache/node_modules/.bin/protoc-gen-es" \
  --es_out="$tmp/src/gen" --es_opt=target=ts "$ROOT/proto/planner.proto"
(cd "$tmp" && node node_modules/typescript/bin/tsc -p tsconfig.json)
rm -rf "$OUT"
mv "$tmp" "$OUT"
