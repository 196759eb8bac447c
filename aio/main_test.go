package aio_test

import (
	"testing"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// TestMain fails the run if the tests leave goroutines or descriptors
// behind: every test must release what it opens, with t.Cleanup. The
// package's sockets are package net's (backendtest.NetSockets).
func TestMain(m *testing.M) {
	backendtest.NetSockets()
	leaktest.Main(m)
}

func openFDs() (map[int]string, bool) { return leaktest.OpenFDs() }

func newFDs(before, now map[int]string) map[int]string { return leaktest.NewFDs(before, now) }

func describeFDs(fds map[int]string) string { return leaktest.Describe(fds) }
