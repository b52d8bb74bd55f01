# ./run vectors: regenerates the shared planner test vectors (tests/vectors/planner/v1/*.json) from the cases in
# tools/vectors/cases.cc: builds cloneset-planner and planner_vectors, starts the planner on 127.0.0.1 (port 0),
# sends every case and writes its answer. Review the diff before committing it: the ctest planner_vectors_cpp and
# every client's vector test then expect exactly these answers.

run_vectors() {
  cmd_build --target cloneset-planner planner_vectors
  "$BUILD_DIR/bin/planner_vectors" generate --planner_binary="$BUILD_DIR/bin/cloneset-planner" \
    --dir="$ROOT/tests/vectors/planner/v1"
}
