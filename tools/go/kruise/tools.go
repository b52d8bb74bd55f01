//go:build tools

// Package tools pins the kruise-manager binary that `./run tool kruise github.com/openkruise/kruise kruise-manager`
// builds from this module, so that `go mod tidy` keeps every module it needs in go.sum.
package tools

import _ "github.com/openkruise/kruise"
