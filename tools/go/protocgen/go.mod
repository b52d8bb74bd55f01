module cloneset.test/tools/protocgen

go 1.24.0

require (
	google.golang.org/grpc/cmd/protoc-gen-go-grpc v1.5.1
	google.golang.org/protobuf v1.36.6
)
