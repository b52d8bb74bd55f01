//go:build tools

// Package tools pins the control-plane binaries, the kubelet and kube-proxy (the real nodes of `./run up --cluster
// real --real-nodes N` and their Services) that `./run toolchain` builds from this module, so that `go mod tidy`
// keeps every module they need in go.sum.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
