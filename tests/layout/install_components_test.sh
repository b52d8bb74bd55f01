#!/usr/bin/env bash
# The install components say what ships (cmake/install.cmake): `product` holds exactly the planner, executor,
# agent, clonesetctl and the Helm chart; `dev` the embedded cluster and its tooling, and none of the product.
# Usage: install_components_test.sh BUILD_DIR
set -euo pipefail
build="${1:?usage: install_components_test.sh BUILD_DIR}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_components_test: $*" >&2; exit 1; }

for c in product dev; do
  cmake --install "$build" --component "$c" --prefix "$tmp/$c" >/dev/null ||
    fail "cmake --install --component $c failed (are the programs built?)"
done
product_bins=$(cd "$tmp/product" && ls bin | sort | tr '\n' ' ')
[ "$product_bins" = "cloneset-agent cloneset-executor cloneset-planner clonesetctl " ] ||
  fail "product bin/ holds '$product_bins', want the agent, executor, planner and clonesetctl"
[ -f "$tmp/product/share/cloneset/charts/cloneset/Chart.yaml" ] || fail "product lacks the Helm chart"
other=$(cd "$tmp/product" && find . -type f ! -path './bin/*' ! -path './share/cloneset/charts/cloneset/*')
[ -z "$other" ] || fail "product holds files beyond the programs and the chart: $other"

for dev in cloneset-devcluster cloneset-sim-cri cloneset-demo; do
  [ -x "$tmp/dev/bin/$dev" ] || fail "dev lacks bin/$dev"
done
for p in cloneset-planner cloneset-executor cloneset-agent clonesetctl; do
  [ ! -e "$tmp/dev/bin/$p" ] || fail "dev holds the product program $p"
done
[ ! -e "$tmp/dev/share/cloneset/charts" ] || fail "dev holds the chart"
echo "install_components_test: product = $product_bins+ chart; dev = $(cd "$tmp/dev" && find . -type f | wc -l) files"
