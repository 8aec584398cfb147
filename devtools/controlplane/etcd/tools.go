//go:build tools

// Package tools pins the etcd server that kubesched's local control plane builds.
package tools

import _ "go.etcd.io/etcd/server/v3"
