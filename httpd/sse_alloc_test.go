//go:build !race

package httpd_test

import (
	"bufio"
	"testing"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestSSESendAllocs: sending an event, or a prepared one, on a stream
// held on the loop allocates nothing once warm (the encoding's buffer is
// pooled, and a socket that takes the bytes copies nothing).
func TestSSESendAllocs(t *testing.T) { backendtest.Run(t, testSSESendAllocs) }

func testSSESendAllocs(t *testing.T) {
	got := make(chan *httpd.Stream, 1)
	addr := sseServe(t, nil, httpd.EventStreamOptions{MaxQueued: 64 << 20}, got)
	resp, _ := sseGet(t, addr, "")
	s := <-got
	done := make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReader(resp.Body)
		for {
			if _, err := br.ReadSlice('\n'); err != nil && err != bufio.ErrBufferFull {
				return
			}
		}
	}()
	ev := httpd.Event{ID: "12345", Event: "tick", Data: "a line\nand another"}
	pe, _ := httpd.NewPreparedEvent(ev)
	for name, send := range map[string]func(){
		"Send":         func() { s.Send(ev) },
		"SendPrepared": func() { s.SendPrepared(pe) },
	} {
		if n := testing.AllocsPerRun(1000, send); n > 0 {
			t.Errorf("%s: %v allocations per event, want 0", name, n)
		}
	}
	s.Close()
	<-done
}
