package engine_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// etLineLimited is a line server (each line answered "+OK") that says
// why when MaxInputBuffer closes a connection: a LimitHandler.
type etLineLimited struct {
	*etHandler
	limits chan etEvent
}

func (h *etLineLimited) OnLimit(c *engine.Conn, err error) {
	c.Write([]byte("-ERR request too large\r\n"))
	etReport(h.etHandler, h.limits, etEvent{c, err})
}

// etAnswerLines answers each whole line with "+OK\r\n" and leaves a
// partial one unconsumed.
func etAnswerLines(c *engine.Conn, in *engine.Inbound) engine.Action {
	for {
		i := bytes.IndexByte(in.Bytes(), '\n')
		if i < 0 {
			return engine.None
		}
		in.Discard(i + 1)
		c.Write([]byte("+OK\r\n"))
	}
}

// A line longer than MaxInputBuffer closes its connection with a word: the
// replies to the lines before it and the handler's OnLimit message reach
// the client, then the end of the stream (no reset); OnClose gets
// ErrInputBufferFull, and Stats counts it.
func TestInputLimitSaysSo(t *testing.T) { backendtest.Run(t, testInputLimitSaysSo) }

func testInputLimitSaysSo(t *testing.T) {
	const max = 64 << 10
	h := &etLineLimited{etHandler: etNewHandler(), limits: make(chan etEvent, 4)}
	h.data = etAnswerLines
	e, err := engine.New(h, engine.Options{MaxInputBuffer: max})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	a := etListen(t, e, "tcp")
	c := etDial(t, a)
	go func() {
		io.WriteString(c, "SET a 1\nSET b 2\n")
		c.Write(bytes.Repeat([]byte("v"), 4*max)) // a line that does not end
	}()
	br := bufio.NewReader(c)
	var got []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if !etStreamEnd(err) {
				t.Fatalf("after %q: %v, want the end of the stream", got, err)
			}
			break
		}
		got = append(got, strings.TrimSpace(line))
	}
	if want := []string{"+OK", "+OK", "-ERR request too large"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("the client read %q, want %q", got, want)
	}
	if ev := etRecv(t, h.limits, "OnLimit"); !errors.Is(ev.err, engine.ErrInputBufferFull) {
		t.Errorf("OnLimit: %v, want ErrInputBufferFull", ev.err)
	}
	if ev := etClosed(t, h.etHandler); !errors.Is(ev.err, engine.ErrInputBufferFull) {
		t.Errorf("OnClose: %v, want ErrInputBufferFull", ev.err)
	}
	if n := e.Stats().Total().Limits.InputBufferFull; n != 1 {
		t.Errorf("Stats().Total().Limits.InputBufferFull = %d, want 1", n)
	}
}

// Without a LimitHandler, the replies queued before the input passed
// MaxInputBuffer still reach the client before the close.
func TestInputLimitKeepsReplies(t *testing.T) { backendtest.Run(t, testInputLimitKeepsReplies) }

func testInputLimitKeepsReplies(t *testing.T) {
	const max = 64 << 10
	h := etNewHandler()
	h.data = etAnswerLines
	_, a := etServeLimit(t, h, engine.Options{MaxInputBuffer: max})
	c := etDial(t, a)
	go func() {
		io.WriteString(c, strings.Repeat("GET k\n", 1000))
		c.Write(bytes.Repeat([]byte("v"), 4*max))
	}()
	n := 0
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if !etStreamEnd(err) && !(n == 1000 && errors.Is(err, syscall.ECONNRESET)) {
				t.Fatalf("after %d replies: %v, want the end of the stream", n, err)
			}
			break
		}
		if line == "+OK\r\n" {
			n++
		}
	}
	if n != 1000 {
		t.Fatalf("%d replies before the close, want 1000", n)
	}
	if ev := etClosed(t, h); !errors.Is(ev.err, engine.ErrInputBufferFull) {
		t.Errorf("OnClose: %v, want ErrInputBufferFull", ev.err)
	}
}

// The other limits that close a connection are counted too, each under
// its own name.
func TestLimitStats(t *testing.T) { backendtest.Run(t, testLimitStats) }

func testLimitStats(t *testing.T) {
	h := etNewHandler()
	e, a := etServeLimit(t, h, engine.Options{IdleTimeout: 100 * time.Millisecond, MaxWriteBuffer: 64 << 10, WriteHighWater: 32 << 10})
	etDial(t, a)
	etOpened(t, h)
	if ev := etClosed(t, h); !errors.Is(ev.err, engine.ErrIdleTimeout) {
		t.Fatalf("OnClose: %v, want ErrIdleTimeout", ev.err)
	}
	c := etDial(t, a) // never reads
	sc := etOpened(t, h)
	for i := 0; i < 1000; i++ {
		if _, err := sc.Write(make([]byte, 32<<10)); err != nil {
			break
		}
	}
	if ev := etClosed(t, h); !errors.Is(ev.err, engine.ErrWriteBufferFull) {
		t.Fatalf("OnClose: %v, want ErrWriteBufferFull", ev.err)
	}
	c.Close()
	l := e.Stats().Total().Limits
	if l.IdleTimeout != 1 || l.WriteBufferFull != 1 || l.InputBufferFull != 0 || l.HandshakeTimeout != 0 {
		t.Fatalf("Stats().Total().Limits = %+v, want one idle timeout and one write buffer full", l)
	}
}

// etServeLimit starts an engine for h with o and listens on TCP.
func etServeLimit(t *testing.T, h *etHandler, o engine.Options) (*engine.Engine, net.Addr) {
	t.Helper()
	e := etStart(t, h, o)
	return e, etListen(t, e, "tcp")
}

// etStreamEnd reports whether err ends a stream whose every byte was
// read: an end of file. (A reset would have discarded what the client
// had not read yet: the graceful close lingers so that none comes. It
// does not linger when the kernel holds none of the peer's bytes and the
// peer has all the server wrote, so a client still sending then may read
// a reset after the last reply: TestInputLimitKeepsReplies takes that
// reset once every reply is in.)
func etStreamEnd(err error) bool { return err == io.EOF }
