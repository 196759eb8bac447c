package restart_test

import (
	"os"
	"testing"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// childEnv selects, in a re-executed test binary, the child's part
// (childModes) instead of the tests.
const childEnv = "GALE_RESTART_CHILD"

// childModes are the parts a re-executed test binary plays.
var childModes = map[string]func() int{}

// TestMain runs a child's part when childEnv says so; otherwise it fails
// the run if the tests leave goroutines or descriptors behind. The
// server's sockets are package net's (backendtest.NetSockets).
func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(childModes[mode]())
	}
	backendtest.NetSockets()
	leaktest.Main(m)
}
