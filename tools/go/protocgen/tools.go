//go:build tools

// Package tools pins the protoc plugins that generate the Go planner client (clients/go) at build time:
// protoc-gen-go (messages) and protoc-gen-go-grpc (the service stubs). `go mod tidy` keeps every module they need
// in go.sum; `./run tool protocgen <package>` builds each once.
package tools

import (
	_ "google.golang.org/grpc/cmd/protoc-gen-go-grpc"
	_ "google.golang.org/protobuf/cmd/protoc-gen-go"
)
