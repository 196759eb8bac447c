package engine_test

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/galeio/gale/engine"
)

// readOpts reads the options TestListenWithOptions sets.
func readOpts(fd int, got map[string]int) {
	got["rcvbuf"], _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	got["reuseport"], _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT)
	got["defer"], _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT)
	got["fastopen"], _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_FASTOPEN)
	dev, _ := unix.GetsockoptString(fd, unix.SOL_SOCKET, unix.SO_BINDTODEVICE)
	if dev == "lo" {
		got["device"] = 1
	}
}

func setPlatformOpts(lc *engine.ListenConfig) {
	lc.DeferAccept = time.Second
	lc.FastOpen = 16
	lc.BindToDevice = "lo"
}

func checkPlatformOpts(t *testing.T, got map[string]int) {
	t.Helper()
	if got["defer"] == 0 || got["fastopen"] != 16 || got["device"] != 1 {
		t.Errorf("Linux options seen by Control: %v", got)
	}
}
