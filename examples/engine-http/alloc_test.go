//go:build !race

package main

import (
	"bytes"
	"testing"
)

// TestHandleAllocs checks that answering pipelined requests allocates
// nothing: the head is parsed in place and the responses go to the
// caller's buffer.
func TestHandleAllocs(t *testing.T) {
	s := newServer()
	req := bytes.Repeat([]byte("GET /plaintext HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: wrk\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n"), 16)
	st := &connState{}
	out := make([]byte, 0, 8<<10)
	run := func() {
		n, o, more, quit := s.handle(st, req, out[:0])
		if n != len(req) || more || quit || len(o) == 0 {
			t.Fatalf("handle = %d, %d bytes, %v, %v, want %d, some, false, false", n, len(o), more, quit, len(req))
		}
	}
	if a := testing.AllocsPerRun(100, run); a != 0 {
		t.Errorf("handle of 16 pipelined requests: %v allocations, want 0", a)
	}
}
