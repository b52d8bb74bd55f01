// @cloneset/planner-client: the CloneSet planner API (cloneset.planner.v1) for TypeScript: the generated messages
// (protoc-gen-es; create/fromJson/toJson/equals from @bufbuild/protobuf), a @grpc/grpc-js client and the rollout
// loop helper. docs/planner-api.md has the API and an example.
export * from "./gen/planner_pb";
export * from "./client";
export * from "./batches";
export * from "./loop";
