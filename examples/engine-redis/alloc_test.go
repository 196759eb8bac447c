//go:build !race

package main

import (
	"bytes"
	"testing"
)

// TestExecAllocs checks that the commands redis-benchmark sends cost no
// allocation once a key exists: arguments are slices of the input,
// replies go to the session's buffer, and a SET of a value no larger
// than the last reuses its array.
func TestExecAllocs(t *testing.T) {
	srv := newServer()
	req := bytes.Repeat([]byte("PING\r\n*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nxxx\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), 32)
	s := &session{}
	run := func() {
		n, more, quit := srv.exec(req, s)
		if n != len(req) || more || quit {
			t.Fatalf("exec = %d, %v, %v, want %d, false, false", n, more, quit, len(req))
		}
		s.out = s.out[:0]
	}
	run() // sets k and grows the buffers
	if a := testing.AllocsPerRun(100, run); a != 0 {
		t.Errorf("exec of %d pipelined commands: %v allocations, want 0", 4*32, a)
	}
}
