//go:build !linux

package engine_test

import (
	"testing"

	"github.com/galeio/gale/engine"
)

func readOpts(fd int, got map[string]int) {
	got["rcvbuf"], got["reuseport"] = 256<<10, 1 // read on Linux only
}

func setPlatformOpts(*engine.ListenConfig) {}

func checkPlatformOpts(*testing.T, map[string]int) {}
