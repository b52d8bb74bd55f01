# ./run install-plugin [DIR]: links build/bin/clonesetctl as DIR/kubectl-cloneset (default ~/.local/bin), so that
# `kubectl cloneset rollout status NAME` works, and as DIR/kubectl_complete-cloneset, the completion helper kubectl
# (1.26 and later) calls for `kubectl cloneset <TAB>`. Builds clonesetctl when missing. Shell completion of
# clonesetctl itself: `source <(clonesetctl completion bash)` (or zsh).
run_install-plugin() {
  case "${1:-}" in -h|--help) sed -n '/^#/!q; s/^# \{0,1\}//p' "$ROOT/tools/run.d/install-plugin.sh"; return 0 ;; esac
  local dir="${1:-$HOME/.local/bin}"
  [ -x "$BUILD_DIR/bin/clonesetctl" ] || cmd_build --target clonesetctl
  mkdir -p "$dir"
  ln -sf "$BUILD_DIR/bin/clonesetctl" "$dir/kubectl-cloneset"
  ln -sf "$BUILD_DIR/bin/clonesetctl" "$dir/kubectl_complete-cloneset"
  log "install-plugin: $dir/kubectl-cloneset and $dir/kubectl_complete-cloneset -> $BUILD_DIR/bin/clonesetctl"
  case ":$PATH:" in *":$dir:"*) ;; *) echo "add $dir to PATH to use 'kubectl cloneset'" ;; esac
  echo "shell completion: source <(kubectl-cloneset completion bash)   # or zsh"
}
