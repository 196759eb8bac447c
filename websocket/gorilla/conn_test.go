package gorilla_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket/gorilla"
)

func copyAll(w io.Writer, r io.Reader) (int64, error) { return io.Copy(w, r) }

// TestEcho sends messages of many sizes, text and binary, to an echo
// server that streams them back (NextReader, NextWriter), and reads them
// back whole (ReadMessage), on every backend.
func TestEcho(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		url, d := serve(t, &gorilla.Upgrader{}, echo)
		c := dial(t, d, url)
		for _, n := range []int{0, 1, 125, 126, 4095, 4096, 4097, 65536, 1 << 20, 3 << 20} {
			for _, typ := range []int{gorilla.TextMessage, gorilla.BinaryMessage} {
				msg := bytes.Repeat([]byte("abcdefg"), n/7+1)[:n]
				if err := c.WriteMessage(typ, msg); err != nil {
					t.Fatal(err)
				}
				c.SetReadDeadline(time.Now().Add(wait))
				gt, got, err := c.ReadMessage()
				if err != nil || gt != typ || !bytes.Equal(got, msg) {
					t.Fatalf("ReadMessage() = %d, %d bytes, %v; want %d, %d bytes", gt, len(got), err, typ, n)
				}
			}
		}
	})
}

// TestJSON round-trips values through WriteJSON and ReadJSON.
func TestJSON(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		url, d := serve(t, &gorilla.Upgrader{}, echo)
		c := dial(t, d, url)
		type msg struct {
			A int
			B string
		}
		for i := range 10 {
			in := msg{i, strings.Repeat("x", i*1000)}
			if err := c.WriteJSON(in); err != nil {
				t.Fatal(err)
			}
			var out msg
			c.SetReadDeadline(time.Now().Add(wait))
			if err := c.ReadJSON(&out); err != nil || out != in {
				t.Fatalf("ReadJSON() = %v, %v; want %v", out, err, in)
			}
		}
	})
}

// TestReadDeadline: a read that waits past the deadline fails with a
// timeout, and the connection stays failed, as gorilla's.
func TestReadDeadline(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		url, d := serve(t, &gorilla.Upgrader{}, echo)
		c := dial(t, d, url)
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		start := time.Now()
		_, _, err := c.ReadMessage()
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("ReadMessage() = %v, want a timeout", err)
		}
		if el := time.Since(start); el < 40*time.Millisecond || el > wait {
			t.Errorf("ReadMessage returned after %v, want about 50ms", el)
		}
		c.SetReadDeadline(time.Time{})
		c.WriteMessage(gorilla.TextMessage, []byte("late"))
		if _, _, err2 := c.ReadMessage(); err2 != err {
			t.Errorf("second ReadMessage() = %v, want the first error %v", err2, err)
		}
	})
}

// TestCloseHandshake: the client's close frame reaches the server's read
// as a *CloseError, and its echo the client's.
func TestCloseHandshake(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		got := make(chan error, 1)
		url, d := serve(t, &gorilla.Upgrader{}, func(c *gorilla.Conn) {
			_, _, err := c.ReadMessage()
			got <- err
		})
		c := dial(t, d, url)
		if err := c.WriteMessage(gorilla.CloseMessage, gorilla.FormatCloseMessage(gorilla.CloseGoingAway, "bye")); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-got:
			if !gorilla.IsCloseError(err, gorilla.CloseGoingAway) || err.(*gorilla.CloseError).Text != "bye" {
				t.Errorf("server read: %v, want close 1001 bye", err)
			}
			if gorilla.IsUnexpectedCloseError(err, gorilla.CloseGoingAway) {
				t.Errorf("IsUnexpectedCloseError(%v, 1001) = true", err)
			}
		case <-time.After(wait):
			t.Fatal("server read did not return")
		}
		c.SetReadDeadline(time.Now().Add(wait))
		_, _, err := c.ReadMessage()
		if !gorilla.IsCloseError(err, gorilla.CloseGoingAway) {
			t.Errorf("client read: %v, want the echo, close 1001", err)
		}
		if err := c.WriteMessage(gorilla.TextMessage, []byte("x")); err != gorilla.ErrCloseSent {
			t.Errorf("WriteMessage after close = %v, want ErrCloseSent", err)
		}
	})
}

// TestPingPong: the peer's pong runs the pong handler on the reader,
// which may extend the read deadline, and the server's ping handler sees
// the ping.
func TestPingPong(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		pings := make(chan string, 1)
		url, d := serve(t, &gorilla.Upgrader{}, func(c *gorilla.Conn) {
			c.SetPingHandler(func(s string) error { pings <- s; return nil })
			echo(c)
		})
		c := dial(t, d, url)
		var pongs atomic.Int32
		c.SetPongHandler(func(s string) error {
			if s == "p" {
				pongs.Add(1)
			}
			return c.SetReadDeadline(time.Now().Add(wait))
		})
		if err := c.WriteControl(gorilla.PingMessage, []byte("p"), time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		c.WriteMessage(gorilla.TextMessage, []byte("after"))
		c.SetReadDeadline(time.Now().Add(wait))
		if _, m, err := c.ReadMessage(); err != nil || string(m) != "after" {
			t.Fatalf("ReadMessage() = %q, %v", m, err)
		}
		if pongs.Load() != 1 {
			t.Errorf("pong handler ran %d times, want 1", pongs.Load())
		}
		select {
		case s := <-pings:
			if s != "p" {
				t.Errorf("server's ping handler got %q", s)
			}
		case <-time.After(wait):
			t.Error("server's ping handler did not run")
		}
	})
}

// TestReadLimit: a message over the limit fails the read with
// ErrReadLimit, and the peer gets a close frame 1009.
func TestReadLimit(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		got := make(chan error, 1)
		url, d := serve(t, &gorilla.Upgrader{}, func(c *gorilla.Conn) {
			c.SetReadLimit(100)
			if _, _, err := c.ReadMessage(); err != nil {
				t.Errorf("first ReadMessage: %v", err)
			}
			_, _, err := c.ReadMessage()
			got <- err
		})
		c := dial(t, d, url)
		c.WriteMessage(gorilla.BinaryMessage, make([]byte, 100))
		c.WriteMessage(gorilla.BinaryMessage, make([]byte, 101))
		select {
		case err := <-got:
			if err != gorilla.ErrReadLimit {
				t.Errorf("ReadMessage() = %v, want ErrReadLimit", err)
			}
		case <-time.After(wait):
			t.Fatal("server read did not return")
		}
		c.SetReadDeadline(time.Now().Add(wait))
		if _, _, err := c.ReadMessage(); !gorilla.IsCloseError(err, gorilla.CloseMessageTooBig) {
			t.Errorf("client read: %v, want close 1009", err)
		}
	})
}

// TestBackpressure: a server that does not read stops its loop reading
// (its inbox is bounded), so the client's queue fills, and its writer
// waits, until the write deadline.
func TestBackpressure(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		release := make(chan struct{})
		url, d := serve(t, &gorilla.Upgrader{}, func(c *gorilla.Conn) {
			<-release
		})
		defer close(release)
		c := dial(t, d, url)
		c.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
		msg := make([]byte, 64<<10)
		var err error
		var n int
		for n = 0; n < 4096 && err == nil; n++ { // 256 MiB at most
			err = c.WriteMessage(gorilla.BinaryMessage, msg)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("after %d writes: %v, want a write timeout", n, err)
		}
		if err2 := c.WriteMessage(gorilla.BinaryMessage, msg); err2 != err {
			t.Errorf("write after the timeout: %v, want %v", err2, err)
		}
	})
}

// TestCloseUnblocksRead: Close from another goroutine ends a blocked
// ReadMessage with an error matching net.ErrClosed.
func TestCloseUnblocksRead(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		url, d := serve(t, &gorilla.Upgrader{}, echo)
		c := dial(t, d, url)
		got := make(chan error, 1)
		go func() {
			_, _, err := c.ReadMessage()
			got <- err
		}()
		time.Sleep(20 * time.Millisecond)
		c.Close()
		select {
		case err := <-got:
			if !errors.Is(err, net.ErrClosed) {
				t.Errorf("ReadMessage() = %v, want net.ErrClosed", err)
			}
		case <-time.After(wait):
			t.Fatal("ReadMessage did not return")
		}
	})
}

// TestSubprotocol: the server's first choice that the client offers is
// agreed on, on both ends.
func TestSubprotocol(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		subs := make(chan string, 1)
		url, d := serve(t, &gorilla.Upgrader{Subprotocols: []string{"b", "a"}}, func(c *gorilla.Conn) {
			subs <- c.Subprotocol()
		})
		d.Subprotocols = []string{"a", "b"}
		c := dial(t, d, url)
		if c.Subprotocol() != "b" {
			t.Errorf("client Subprotocol() = %q, want b", c.Subprotocol())
		}
		if s := <-subs; s != "b" {
			t.Errorf("server Subprotocol() = %q, want b", s)
		}
	})
}

// TestNextReaderStreams reads a 16 MiB message through NextReader in
// small reads: its pieces stream through the bounded inbox.
func TestNextReaderStreams(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		const size = 16 << 20
		url, d := serve(t, &gorilla.Upgrader{}, func(c *gorilla.Conn) {
			w, _ := c.NextWriter(gorilla.BinaryMessage)
			chunk := bytes.Repeat([]byte{7}, 1000)
			for n := 0; n < size; n += len(chunk) {
				if _, err := w.Write(chunk[:min(len(chunk), size-n)]); err != nil {
					return
				}
			}
			w.Close()
			c.ReadMessage() // until the client goes
		})
		c := dial(t, d, url)
		c.SetReadDeadline(time.Now().Add(wait))
		typ, r, err := c.NextReader()
		if err != nil || typ != gorilla.BinaryMessage {
			t.Fatalf("NextReader() = %d, %v", typ, err)
		}
		buf := make([]byte, 3000)
		total := 0
		for {
			n, err := r.Read(buf)
			for _, b := range buf[:n] {
				if b != 7 {
					t.Fatalf("byte %d is %d", total, b)
				}
			}
			total += n
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if total != size {
			t.Errorf("read %d bytes, want %d", total, size)
		}
	})
}

// TestCompression echoes messages over a connection that negotiated
// permessage-deflate.
func TestCompression(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		url, d := serve(t, &gorilla.Upgrader{EnableCompression: true}, echo)
		d.EnableCompression = true
		c := dial(t, d, url)
		for _, n := range []int{10, 1000, 100000} {
			msg := []byte(strings.Repeat("compress me ", n))
			c.WriteMessage(gorilla.TextMessage, msg)
			c.SetReadDeadline(time.Now().Add(wait))
			if _, got, err := c.ReadMessage(); err != nil || !bytes.Equal(got, msg) {
				t.Fatalf("ReadMessage() = %d bytes, %v; want %d", len(got), err, len(msg))
			}
		}
	})
}

// TestReadLimitSetLate: a limit set after the message arrived (the
// handler's SetReadLimit comes after the client wrote) still fails the
// read that reaches it, as gorilla's, whose reader checks it; the loop
// had queued the message before the limit was there.
func TestReadLimitSetLate(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		got := make(chan error, 1)
		sent := make(chan struct{})
		url, d := serve(t, &gorilla.Upgrader{}, func(c *gorilla.Conn) {
			<-sent
			time.Sleep(50 * time.Millisecond) // the messages reach the inbox
			c.SetReadLimit(100)
			if _, _, err := c.ReadMessage(); err != nil {
				t.Errorf("first ReadMessage: %v", err)
			}
			_, _, err := c.ReadMessage()
			got <- err
		})
		c := dial(t, d, url)
		c.WriteMessage(gorilla.BinaryMessage, make([]byte, 100))
		c.WriteMessage(gorilla.BinaryMessage, make([]byte, 101))
		close(sent)
		select {
		case err := <-got:
			if err != gorilla.ErrReadLimit {
				t.Errorf("ReadMessage() = %v, want ErrReadLimit", err)
			}
		case <-time.After(wait):
			t.Fatal("server read did not return")
		}
		c.SetReadDeadline(time.Now().Add(wait))
		if _, _, err := c.ReadMessage(); !gorilla.IsCloseError(err, gorilla.CloseMessageTooBig) {
			t.Errorf("client read: %v, want close 1009", err)
		}
	})
}
