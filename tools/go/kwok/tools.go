//go:build tools

// Package tools pins the kwok binary that `./run toolchain` builds from this module, so that `go mod tidy` keeps
// every module it needs in go.sum.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
