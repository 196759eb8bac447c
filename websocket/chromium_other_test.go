//go:build !unix

package websocket_test

import "os/exec"

func inGroup(*exec.Cmd)   {}
func killGroup(*exec.Cmd) {}
