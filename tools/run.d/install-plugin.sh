# ./run install-plugin [DIR]: links build/bin/clonesetctl as DIR/kubectl-cloneset (default ~/.local/bin), so that
# `kubectl cloneset status NAME` works. Builds clonesetctl when missing.
run_install-plugin() {
  local dir="${1:-$HOME/.local/bin}"
  [ -x "$BUILD_DIR/bin/clonesetctl" ] || cmd_build --target clonesetctl
  mkdir -p "$dir"
  ln -sf "$BUILD_DIR/bin/clonesetctl" "$dir/kubectl-cloneset"
  log "install-plugin: $dir/kubectl-cloneset -> $BUILD_DIR/bin/clonesetctl"
  case ":$PATH:" in *":$dir:"*) ;; *) echo "add $dir to PATH to use 'kubectl cloneset'" ;; esac
}
