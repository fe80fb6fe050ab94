//go:build tools

// Package tools pulls the command this wrapper builds into the module graph.
package tools

import _ "go.etcd.io/etcd/server/v3"
