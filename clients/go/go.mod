// The Go client of the CloneSet planner API (cloneset.planner.v1): the generated messages and stubs (package
// plannerv1, generated from proto/planner.proto at build time by clients/go/build.sh, never committed) and a thin
// helper for the rollout loop (package planner).
module cloneset.dev/planner

go 1.24.0

require (
	google.golang.org/grpc v1.72.1
	google.golang.org/protobuf v1.36.6
)

require (
	golang.org/x/net v0.35.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
	golang.org/x/text v0.22.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250218202821-56aae31c358a // indirect
)
