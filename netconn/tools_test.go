package netconn_test

import (
	"os"
	"os/exec"
	"testing"
)

// needTool returns the path of name, an external program a test drives
// (wrk, openssl). Where it is missing the test skips, as the repository's
// other tests of external tools do (internal/benchrun's perf); under CI
// (the variable CI set) it fails instead, so that a CI machine without
// the tool cannot pass silently.
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not installed, and CI is set: CI must install it (Debian: apt-get install %s)", name, name)
	}
	t.Skipf("%s not installed", name)
	return ""
}
