//go:build unix

package websocket_test

import (
	"os/exec"
	"syscall"
)

// inGroup runs cmd in a process group of its own, which its context's end
// kills whole: Chromium's helper processes go with it, instead of writing
// on in its profile while the test removes it.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// killGroup kills what is left of cmd's group once cmd ended.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
