//go:build tools

// Package tools pins the etcd server binary that `./run toolchain` builds from this module, so that
// `go mod tidy` keeps every module it needs in go.sum.
package tools

import _ "go.etcd.io/etcd/server/v3"
