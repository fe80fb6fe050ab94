//go:build tools

// Package tools pulls the command this wrapper builds into the module graph.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
