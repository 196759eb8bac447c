package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
)

// gcCommand and gcReply are a RESP-like exchange: the client pipelines
// commands, the server answers each.
var (
	gcCommand = []byte("PING\r\n")
	gcReply   = []byte("+" + strings.Repeat("x", 61) + "\r\n")
)

// gcRoundWait bounds a round of these tests: its client reads about a
// megabyte of replies, which takes tens of milliseconds.
const gcRoundWait = 3 * time.Second

// gcServer answers every whole command it receives and counts them:
// executed is what the client is owed a reply for.
type gcServer struct {
	executed atomic.Int64
	at       int64         // close started once executed reaches it
	reached  chan struct{} // closed then
}

func (s *gcServer) data(c *engine.Conn, in *engine.Inbound) engine.Action {
	b := in.Bytes()
	n := bytes.Count(b, []byte("\n"))
	if n == 0 {
		return engine.None
	}
	in.Discard(bytes.LastIndexByte(b, '\n') + 1)
	if _, err := c.Write(bytes.Repeat(gcReply, n)); err != nil {
		return engine.None // closing: the commands were not executed
	}
	if s.executed.Add(int64(n)) >= s.at && s.at > 0 {
		select {
		case <-s.reached:
		default:
			close(s.reached)
		}
	}
	return engine.None
}

// gcClient pipelines commands on a connection in batches, written back
// to back without waiting for replies, while it reads the replies, a
// little slowly (so that they back up in the server), until the server's
// end of stream; then it closes. It sends at most total commands.
type gcClient struct {
	nc      net.Conn
	total   int
	replies int
	readErr error // what ended the reading: io.EOF for a clean end
	done    chan struct{}
}

func gcPipeline(nc net.Conn, total, batch int) *gcClient {
	cl := &gcClient{nc: nc, total: total, done: make(chan struct{})}
	nc.SetDeadline(time.Now().Add(gcRoundWait))
	writing := make(chan struct{})
	go func() {
		defer close(writing)
		cmds := bytes.Repeat(gcCommand, batch)
		for sent := 0; sent < total; sent += batch {
			if _, err := nc.Write(cmds[:len(gcCommand)*min(batch, total-sent)]); err != nil {
				return // the server closed: a real client stops here too
			}
			time.Sleep(time.Millisecond) // batches go on arriving as the server closes
		}
	}()
	go func() {
		defer close(cl.done)
		got, err := gcReadAll(nc, 16<<10)
		cl.replies, cl.readErr = got/len(gcReply), err
		nc.Close() // ends the writer too
		<-writing
	}()
	return cl
}

// wait waits for the client to end, bounded by etWait.
func (cl *gcClient) wait(t *testing.T) {
	t.Helper()
	select {
	case <-cl.done:
	case <-time.After(2 * gcRoundWait):
		t.Fatalf("client still reading after %v", 2*gcRoundWait)
	}
}

// TestShutdownDeliversReplies checks that a graceful Shutdown loses no
// reply the server produced. A client pipelines commands; Shutdown starts
// while it still sends. The client must read a reply to every command
// the server executed, then end of file (not a reset), and Shutdown must
// return nil. It failed in most rounds: the close(2) of a socket with
// unread input sends a reset, and the client's kernel drops the replies
// it had not read yet (ECONNRESET, thousands of replies missing).
func TestShutdownDeliversReplies(t *testing.T) { backendtest.Run(t, testShutdownDeliversReplies) }

func testShutdownDeliversReplies(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	etForStreams(t, func(t *testing.T, network string) {
		failed := 0
		var first string
		for r := 0; r < rounds && failed < 3; r++ {
			if msg := gcShutdownRound(t, network); msg != "" {
				failed++
				if first == "" {
					first = fmt.Sprintf("round %d: %s", r, msg)
				}
			}
		}
		if failed > 0 {
			t.Errorf("rounds lost replies (stopped after %d failed); first: %s", failed, first)
		}
	})
}

// gcShutdownRound runs one pipelining client against an engine that
// shuts down mid-stream, and returns what went wrong, or "".
func gcShutdownRound(t *testing.T, network string) string {
	const total, batch = 20000, 2000
	s := &gcServer{at: 3000, reached: make(chan struct{})}
	h := etNewHandler()
	h.data = s.data
	e := etStart(t, h, engine.Options{})
	a := etListen(t, e, network)
	nc := etDial(t, a)
	cl := gcPipeline(nc, total, batch)
	select {
	case <-s.reached:
	case <-time.After(etWait):
		return fmt.Sprintf("server executed %d commands in %v, want %d", s.executed.Load(), etWait, s.at)
	}
	ctx, cancel := context.WithTimeout(context.Background(), etWait)
	defer cancel()
	err := e.Shutdown(ctx)
	cl.wait(t)
	ev := etClosed(t, h)
	exec := s.executed.Load()
	switch {
	case int64(cl.replies) != exec || cl.readErr != io.EOF:
		return fmt.Sprintf("client read %d replies, then %v; server executed %d (Shutdown = %v, OnClose(%v))",
			cl.replies, cl.readErr, exec, err, ev.err)
	case err != nil:
		return fmt.Sprintf("Shutdown = %v, want nil: every reply was delivered", err)
	case ev.err != nil:
		return fmt.Sprintf("OnClose(%v), want nil", ev.err)
	}
	return ""
}

// TestCloseAfterWriteDelivers checks that Close right after a Write of a
// large reply delivers all of it while the peer still sends requests
// that the server does not read: the close(2) of a socket with unread
// input sends a reset, which threw away the reply's tail in the peer's
// kernel.
func TestCloseAfterWriteDelivers(t *testing.T) { backendtest.Run(t, testCloseAfterWriteDelivers) }

func testCloseAfterWriteDelivers(t *testing.T) {
	const reply = 1 << 20
	etForStreams(t, func(t *testing.T, network string) {
		h := etNewHandler()
		body := bytes.Repeat([]byte("r"), reply)
		h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
			in.Discard(in.Len())
			if c.Context() == nil {
				c.SetContext(true)
				c.Write(body)
				c.Close()
			}
			return engine.None
		}
		_, _, peer := etServe(t, h, engine.Options{}, network)
		peer.SetDeadline(time.Now().Add(etWait))
		// Requests go on after the reply's: a client pipelining (or an
		// upload the server answers early) whose bytes the server never
		// reads.
		writing := make(chan struct{})
		go func() {
			defer close(writing)
			req := bytes.Repeat([]byte("q"), 512)
			for range 128 {
				if _, err := peer.Write(req); err != nil {
					return
				}
				time.Sleep(100 * time.Microsecond)
			}
		}()
		got, err := gcReadAll(peer, 16<<10)
		if got != reply || err != io.EOF {
			t.Errorf("peer read %d bytes, then %v; want %d, then EOF", got, err, reply)
		}
		peer.Close()
		etRecv(t, writing, "the writer's end")
		if ev := etClosed(t, h); ev.err != nil {
			t.Errorf("OnClose(%v), want nil", ev.err)
		}
	})
}

// gcReadAll reads c until an error, slowly (pieces of at most size, a
// pause between them), and returns the count and the error.
func gcReadAll(c net.Conn, size int) (int, error) {
	buf := make([]byte, size)
	got := 0
	for {
		n, err := c.Read(buf)
		got += n
		if err != nil {
			return got, err
		}
		time.Sleep(50 * time.Microsecond)
	}
}
