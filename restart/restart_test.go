//go:build unix

package restart_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/websocket"
)

// generation is a running server child (serverChild).
type generation struct {
	cmd   *exec.Cmd
	lines chan string // its stdout, line by line; closed at its end
	stdin io.WriteCloser
	addr  string
}

// startGeneration starts a server child on the control socket ctl,
// taking the listener over if take, and waits until it serves.
func startGeneration(t *testing.T, ctl string, take, conns bool) *generation {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=server", "GALE_RESTART_CTL="+ctl)
	if take {
		cmd.Env = append(cmd.Env, "GALE_RESTART_TAKE=1")
	}
	if conns {
		cmd.Env = append(cmd.Env, "GALE_RESTART_CONNS=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &generation{cmd: cmd, lines: make(chan string, 16), stdin: in}
	go func() {
		defer close(g.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			g.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { g.stop(t) })
	line := g.next(t)
	addr, ok := strings.CutPrefix(line, "serving ")
	if !ok {
		t.Fatalf("generation %d: %q, want serving <addr>", cmd.Process.Pid, line)
	}
	g.addr = addr
	return g
}

// next returns g's next line, within testTimeout.
func (g *generation) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-g.lines:
		if !ok {
			t.Fatalf("generation %d ended", g.cmd.Process.Pid)
		}
		return l
	case <-time.After(2 * testTimeout):
		t.Fatalf("generation %d said nothing for %v", g.cmd.Process.Pid, 2*testTimeout)
	}
	return ""
}

// drained waits for g to report its drain and to exit. A generation with
// no successor drains once its stdin ends; one taken over has begun.
func (g *generation) drained(t *testing.T) string {
	t.Helper()
	g.stdin.Close()
	line := g.next(t)
	g.stop(t)
	return line
}

// stop ends g's stdin (a generation with no successor drains then) and
// waits for it, killing it past the bound.
func (g *generation) stop(t *testing.T) {
	g.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- g.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * testTimeout):
		g.cmd.Process.Kill()
		<-done
		t.Errorf("generation %d did not exit; killed", g.cmd.Process.Pid)
	}
	for range g.lines {
	}
}

// load counts what the clients saw.
type load struct {
	dials, refused       atomic.Int64 // TCP connection attempts, and those refused
	httpDials            atomic.Int64 // of which the HTTP clients
	serverEnds           atomic.Int64 // HTTP clients' connections a server ended (endWatch), or closed by its response
	firstEnd             atomic.Pointer[string]
	requests, failed     atomic.Int64 // HTTP requests, and those that failed (error or wrong body)
	servedBy             sync.Map     // pid → requests it answered
	wsSent, wsEchoed     atomic.Int64 // distinct WebSocket messages sent, and echoed
	wsResent, wsRestarts atomic.Int64 // messages sent again on a new connection; 1012s received
	wsFailed             atomic.Int64 // dials or writes that failed
	firstErr             sync.Once
	errText              atomic.Value
}

func (l *load) fail(err error) {
	l.firstErr.Do(func() { l.errText.Store(err.Error()) })
}

// dialer counts connection attempts and refusals.
func (l *load) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	l.dials.Add(1)
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if errors.Is(err, syscall.ECONNREFUSED) {
		l.refused.Add(1)
	}
	return c, err
}

// httpClient sends GET /hello with a keep-alive connection until stop,
// checking each body.
func (l *load) httpClient(addr string, id int, stop <-chan struct{}) {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		l.httpDials.Add(1)
		c, err := l.dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &endWatch{Conn: c, l: l}, nil
	}
	tr := &http.Transport{DialContext: dial, MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: testTimeout}
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		l.requests.Add(1)
		q := fmt.Sprintf("%d-%d", id, n)
		resp, err := cl.Get("http://" + addr + "/hello?n=" + q)
		if err != nil {
			l.failed.Add(1)
			l.fail(err)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Close {
			l.serverEnded("a response with Connection: close") // the client closes
		}
		var pid int
		if _, serr := fmt.Sscanf(string(body), "hello "+q+" from %d", &pid); err != nil || serr != nil || resp.StatusCode != 200 {
			l.failed.Add(1)
			l.fail(fmt.Errorf("GET %s: %d %q %v", q, resp.StatusCode, body, err))
			continue
		}
		v, _ := l.servedBy.LoadOrStore(pid, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
}

// endWatch is an HTTP client's connection. It tells an end the server
// made (a read or write that fails, with the end of the stream or a
// reset, before the client closed the connection) from the client's own
// close: the Transport may close a connection and dial another for
// reasons of its own (it reuses one only if its writer reported the
// request written within 50 ms, say), which a hand-over cannot prevent.
type endWatch struct {
	net.Conn
	l       *load
	closing atomic.Bool // the client closes it
	failed  atomic.Bool // a read or write failed
}

func (c *endWatch) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.ended(err)
	return n, err
}

func (c *endWatch) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.ended(err)
	return n, err
}

// ended counts the connection's first failed read or write, unless the
// client closed it first.
func (c *endWatch) ended(err error) {
	if err != nil && !c.closing.Load() && !c.failed.Swap(true) {
		c.l.serverEnded(err.Error())
	}
}

func (c *endWatch) Close() error {
	c.closing.Store(true)
	return c.Conn.Close()
}

// serverEnded counts an HTTP client's connection a server ended, and
// keeps the first reason.
func (l *load) serverEnded(why string) {
	l.serverEnds.Add(1)
	l.firstEnd.CompareAndSwap(nil, &why)
}

// wsConn is one WebSocket connection's events: its Context.
type wsConn struct {
	msgs   chan string
	closed chan error
}

// wsRouter hands each connection's events to its wsConn.
type wsRouter struct{ websocket.BaseHandler }

func (wsRouter) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	c.Context().(*wsConn).msgs <- string(data)
}
func (wsRouter) OnClose(c *websocket.Conn, err error) { c.Context().(*wsConn).closed <- err }

// wsClient sends numbered messages one at a time and waits for each echo;
// on a close (1012) before the echo it reconnects and sends the message
// again. A message counts as echoed once its echo came on some
// connection: none is lost if sent equals echoed at the end.
func (l *load) wsClient(e *engine.Engine, addr string, id int, stop <-chan struct{}) {
	d := &websocket.Dialer{Options: websocket.Options{Engine: e, Handler: wsRouter{}}}
	var c *websocket.Conn
	var h *wsConn
	pending := ""
	for n := 0; ; {
		if c == nil {
			h = &wsConn{msgs: make(chan string, 4), closed: make(chan error, 1)}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			var err error
			l.dials.Add(1)
			c, _, err = d.DialWith(ctx, "ws://"+addr+"/ws", h)
			cancel()
			if errors.Is(err, syscall.ECONNREFUSED) {
				l.refused.Add(1)
			}
			if err != nil {
				l.wsFailed.Add(1)
				l.fail(err)
				c = nil
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Millisecond):
				}
				continue
			}
		}
		if pending == "" {
			select {
			case <-stop:
				c.Close(websocket.StatusNormalClosure, "")
				<-h.closed
				return
			default:
			}
			pending = fmt.Sprintf("%d-%d", id, n)
			n++
			l.wsSent.Add(1)
		} else {
			l.wsResent.Add(1)
		}
		if err := c.WriteMessage(websocket.TextMessage, []byte(pending)); err != nil {
			l.closed(<-h.closed) // the connection is ending: resend on the next
			c = nil
			continue
		}
		select {
		case m := <-h.msgs:
			if m == pending {
				l.wsEchoed.Add(1)
				pending = ""
			}
		case err := <-h.closed:
			l.closed(err)
			c = nil
		case <-time.After(testTimeout):
			l.wsFailed.Add(1)
			l.fail(errors.New("no echo within the timeout"))
			c.CloseNow()
			<-h.closed
			c = nil
		}
	}
}

// closed counts a WebSocket's close: 1012 is the restart's, anything
// else a failure.
func (l *load) closed(err error) {
	if websocket.CloseStatus(err) == websocket.StatusServiceRestart {
		l.wsRestarts.Add(1)
		return
	}
	l.wsFailed.Add(1)
	l.fail(fmt.Errorf("websocket closed: %w", err))
}

// TestRestartUnderLoad restarts a server twice (A → B → C) under
// continuous load, each new generation taking the listener over from the
// old one through the control socket while HTTP keep-alive clients and
// WebSocket echo clients run. It measures:
//
//   - refused: TCP connection attempts refused (ECONNREFUSED); must be 0.
//   - failed: HTTP requests that returned an error or a wrong body; must
//     be 0. net/http's Transport retries an idempotent request (GET) that
//     it wrote on a reused keep-alive connection the server closed while
//     idle: that is how net/http's clients survive any server's graceful
//     shutdown, and such a retry is not counted as a failure.
//   - WebSocket messages: each client sends a numbered message and waits
//     for its echo before the next. On a close with 1012 before the echo
//     it reconnects (to whichever process accepts) and sends that message
//     again (resent). Lost = distinct messages sent - distinct messages
//     echoed; must be 0. Any other close, dial error or missing echo
//     counts as a WebSocket failure; must be 0.
//
// With conns, each generation also hands its idle keep-alive connections
// to the next (httpd.Server.HandOff, SendConn, ReadyWith, ServeConn): no
// HTTP client's connection is then ended by a server (endWatch), and
// each generation reports every hand-over made and taken.
func TestRestartUnderLoad(t *testing.T) {
	t.Run("listeners", func(t *testing.T) { testRestartUnderLoad(t, false) })
	t.Run("listeners-and-conns", func(t *testing.T) { testRestartUnderLoad(t, true) })
}

func testRestartUnderLoad(t *testing.T, conns bool) {
	phase := 1500 * time.Millisecond
	if testing.Short() {
		phase = 500 * time.Millisecond
	}
	const clients = 4
	ctl := filepath.Join(t.TempDir(), "ctl")
	a := startGeneration(t, ctl, false, conns)
	e, err := websocket.NewEngine(engine.Options{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	var l load
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() { l.httpClient(a.addr, i, stop) })
		wg.Go(func() { l.wsClient(e, a.addr, i, stop) })
	}
	time.Sleep(phase)
	b := startGeneration(t, ctl, true, conns)
	aLine := a.drained(t)
	t.Logf("A %d → B %d: A %s", a.cmd.Process.Pid, b.cmd.Process.Pid, aLine)
	time.Sleep(phase)
	c := startGeneration(t, ctl, true, conns)
	bLine := b.drained(t)
	t.Logf("B %d → C %d: B %s", b.cmd.Process.Pid, c.cmd.Process.Pid, bLine)
	time.Sleep(phase)
	close(stop)
	wg.Wait()
	t.Logf("C %d: %s", c.cmd.Process.Pid, c.drained(t))

	served := map[int]int64{}
	l.servedBy.Range(func(k, v any) bool { served[k.(int)] = v.(*atomic.Int64).Load(); return true })
	lost := l.wsSent.Load() - l.wsEchoed.Load()
	t.Logf("TCP: %d connection attempts (HTTP clients: %d, of their connections %d ended by a server), %d refused",
		l.dials.Load(), l.httpDials.Load(), l.serverEnds.Load(), l.refused.Load())
	t.Logf("HTTP: %d requests, %d failed; answered by pid: %v", l.requests.Load(), l.failed.Load(), served)
	t.Logf("WebSocket: %d messages sent, %d echoed, %d lost, %d resent after %d closes with 1012, %d failures",
		l.wsSent.Load(), l.wsEchoed.Load(), lost, l.wsResent.Load(), l.wsRestarts.Load(), l.wsFailed.Load())
	if e, _ := l.errText.Load().(string); e != "" {
		t.Logf("first error: %s", e)
	}
	if l.refused.Load() != 0 || l.failed.Load() != 0 || lost != 0 || l.wsFailed.Load() != 0 {
		t.Errorf("refused %d, HTTP failed %d, WebSocket lost %d and failed %d: want all 0",
			l.refused.Load(), l.failed.Load(), lost, l.wsFailed.Load())
	}
	if len(served) != 3 {
		t.Errorf("requests answered by %d processes, want 3 (A, B, C)", len(served))
	}
	if !conns {
		return
	}
	if n := l.serverEnds.Load(); n != 0 {
		t.Errorf("a server ended %d of the HTTP clients' connections (first: %s): want 0, each handed over", n, *l.firstEnd.Load())
	}
	for _, line := range []string{aLine, bLine} {
		if !strings.Contains(line, " failed=0 ") || !strings.Contains(line, " unserved=0") {
			t.Errorf("a hand-over failed: %s", line)
		}
	}
}
