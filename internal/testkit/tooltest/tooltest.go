// Package tooltest finds the external programs that conformance tests
// drive (openssl, curl, wrk). For tests only.
package tooltest

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// Need returns the path of name, an external program the test runs as
// role ("the engine's peer", "the server's client"). Where it is missing
// the test skips and says so; under CI (the variable CI set) it fails
// instead, so that a CI machine without the tool cannot pass without
// running the test. A Windows test binary skips either way: CI runs it
// under Wine, beside Debian's programs, which a Windows binary cannot
// run.
func Need(t testing.TB, name, role string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" && runtime.GOOS != "windows" {
		t.Fatalf("%s is not installed and CI is set: CI must install it (Debian: apt-get install %s)", name, name)
	}
	t.Skipf("%s is not installed: this test runs it as %s", name, role)
	return ""
}
