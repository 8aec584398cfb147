//go:build tools

// Package tools pins kwok, which keeps the local control plane's fake nodes and pods alive.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
