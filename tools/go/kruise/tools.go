//go:build tools

// Package tools pins the kruise-manager binary that `./run tool kruise github.com/openkruise/kruise kruise-manager`
// builds from this module, so that `go mod tidy` keeps every module it needs in go.sum. The module's own commands,
// cmd/kruise-revision (upstream's revision code, for tests/kruise_revision) and cmd/pod-template-schema (the
// generator of planner/go_pod_template_schema.h), build against the same pinned versions.
package tools

import _ "github.com/openkruise/kruise"
