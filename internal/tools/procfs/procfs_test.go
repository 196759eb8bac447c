package procfs

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// These tests read the test process's own entries: the figures must be
// plausible and follow what the test does.

func TestSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux's /proc")
	}
	pid := os.Getpid()
	if rss, err := RSS(pid); err != nil || rss <= 0 {
		t.Errorf("RSS(self) = %d, %v; want > 0, nil", rss, err)
	}
	rss, _ := RSS(pid)
	if peak, err := PeakRSS(pid); err != nil || peak < rss {
		t.Errorf("PeakRSS(self) = %d, %v; want ≥ RSS %d, nil", peak, err, rss)
	}
	if _, err := CPU(pid); err != nil {
		t.Errorf("CPU(self) = %v", err)
	}
	runtime.Gosched()
	if n, err := CtxSwitches(pid); err != nil || n <= 0 {
		t.Errorf("CtxSwitches(self) = %d, %v; want > 0, nil", n, err)
	}
	if _, err := RSS(1 << 30); err == nil {
		t.Error("RSS(no such pid) = nil error, want one")
	}
}

func TestFDsFollowsAPipe(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux's /proc")
	}
	before, err := FDs(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	during, _ := FDs(os.Getpid())
	rfd := int(r.Fd())
	r.Close()
	w.Close()
	after, _ := FDs(os.Getpid())
	if len(during) != len(before)+2 || len(after) != len(before) {
		t.Errorf("descriptors: %d before, %d with a pipe open, %d after; want n, n+2, n", len(before), len(during), len(after))
	}
	if got := during[rfd]; !strings.HasPrefix(got, "pipe:") {
		t.Errorf("FDs has %q for the pipe's read end %d, want pipe:[inode]", got, rfd)
	}
}
