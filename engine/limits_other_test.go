//go:build !linux

package engine_test

import (
	"testing"

	"github.com/galeio/gale/engine"
)

// The sub-tests of TestLimits that need Linux (limits_linux_test.go).

func testLimitsKeepAlive(t *testing.T)   { t.Skip("reads Linux's keep-alive options") }
func testLimitsDescriptors(t *testing.T) { t.Skip("lowers the open-file limit with Linux's calls") }
func testLimitsBacklog(t *testing.T)     { t.Skip("connects raw sockets with Linux's calls") }

// limSpillUnbounded: only Linux has io_uring.
func limSpillUnbounded(*engine.Engine) bool { return false }
