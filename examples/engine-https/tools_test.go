package main

import (
	"os"
	"os/exec"
	"testing"
)

// needTool returns the path of name, an external program a test runs as
// the server's client (curl). Where it is missing the test skips and says
// so; under CI (the variable CI set) it fails instead, so that a CI
// machine without the tool cannot pass without running the test.
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed and CI is set: CI must install it (Debian: apt-get install %s)", name, name)
	}
	t.Skipf("%s is not installed: this test runs it as the server's client", name)
	return ""
}
