//go:build tools

// Package tools pulls the command this wrapper builds into the module graph.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
