package main

import (
	"bufio"
	"bytes"
	"context"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"log"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

const testTimeout = 10 * time.Second

func TestPushServer(t *testing.T) {
	leaktest.Check(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	var logs lockedBuffer
	go func() { errc <- run(ctx, ln, 10*time.Millisecond, log.New(&logs, "", 0)) }()
	defer func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("run = %v, want nil after cancel", err)
			}
		case <-time.After(testTimeout):
			t.Fatalf("run did not return within %v of cancel", testTimeout)
		}
		// Pushes to a after it closed failed, and the server let it go.
		if got := logs.String(); !strings.Contains(got, "gone:") {
			t.Errorf("server log = %q, want a client gone", got)
		}
	}()

	a, ra := dialPush(t, ln.Addr().String())
	defer a.Close()
	b, rb := dialPush(t, ln.Addr().String())
	defer b.Close()
	expectPushes(t, "a", ra, 3)
	expectPushes(t, "b", rb, 3)

	// A client that leaves does not stop the pushes to the others.
	a.Close()
	expectPushes(t, "b after a left", rb, 5)

	// A client that does not read holds back nobody else.
	c, _ := dialPush(t, ln.Addr().String())
	defer c.Close()
	expectPushes(t, "b next to an idle client", rb, 3)
}

// lockedBuffer is a bytes.Buffer safe for the server's logger and the
// test to share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func dialPush(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(testTimeout))
	return c, bufio.NewReader(c)
}

// expectPushes reads n pushes from r and checks that each is a timestamp
// later than the one before.
func expectPushes(t *testing.T, name string, r *bufio.Reader, n int) {
	t.Helper()
	var last time.Time
	for i := range n {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: push %d: ReadString = %q, %v", name, i, line, err)
		}
		ts, err := time.Parse(time.RFC3339Nano, strings.TrimSuffix(line, "\n"))
		if err != nil {
			t.Fatalf("%s: push %d = %q, want an RFC 3339 time: %v", name, i, line, err)
		}
		if !ts.After(last) {
			t.Fatalf("%s: push %d = %v, want after %v", name, i, ts, last)
		}
		last = ts
	}
}
