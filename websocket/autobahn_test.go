package websocket_test

// The Autobahn testsuite (wstest, autobahntestsuite), every case of
// groups 1-13, against gale's WebSocket server and client: wstest's
// fuzzingclient tests echo servers on httpd.Server (plain and TLS, with
// and without context takeover); wstest's fuzzingserver tests echo
// clients made by Dialer. A case passes when wstest calls it OK,
// NON-STRICT or INFORMATIONAL, in its behavior and its close behavior.
//
// They take minutes, so they run only with GALE_AUTOBAHN=1 (CI runs them
// in a section of their own, without -race). GALE_AUTOBAHN_REPORT=dir
// also writes the results and a summary there (docs/autobahn holds
// them). The harness is autobahn_harness_test.go.

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
	"github.com/galeio/gale/websocket"
)

// abLimit is the read limit and output queue of the peers under test:
// cases 9.1.6 and 9.2.6 send 16 MiB messages, to be echoed whole.
const abLimit = 64 << 20

// abPerCase bounds one case of the client test; wstest's own longest
// timeout is 60 s (12.x and 13.x).
const abPerCase = 2 * time.Minute

// abAll reports whether the TLS and context-takeover agents run too
// (GALE_AUTOBAHN=all): CI runs the two agents that cover every case for
// the server and the client, with CompressionEnabled. The takeover
// agents differ only in groups 12 and 13, and the TLS agent repeats the
// server's cases over wss://, whose record path websocket's own tests
// cover (echo_test.go, raw_test.go); each takes as long as a CI agent,
// so they run by hand (docs/autobahn has their report).
func abAll() bool { return os.Getenv("GALE_AUTOBAHN") == "all" }

// abStreamOnly reports whether only the server's streaming agent runs
// (GALE_AUTOBAHN=stream): an echo server that takes each message in
// pieces (a StreamHandler) and sends them on as a stream's fragments.
// GALE_AUTOBAHN=all runs it too.
func abStreamOnly() bool { return os.Getenv("GALE_AUTOBAHN") == "stream" }

func needAutobahn(t *testing.T) {
	t.Helper()
	if v := os.Getenv("GALE_AUTOBAHN"); v != "1" && v != "all" && v != "stream" {
		t.Skip("the Autobahn testsuite takes minutes: set GALE_AUTOBAHN=1 (or all, with the takeover, TLS and streaming agents; or stream, the streaming agent only) to run it")
	}
}

// abEcho echoes every message back.
type abEcho struct{ websocket.BaseHandler }

func (abEcho) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	c.WriteMessage(typ, data)
}

// abStreamEcho echoes every message as it arrives: it takes it in pieces
// (it is a StreamHandler) and writes each piece to a stream (NextWriter),
// the connection's Context while the message lasts.
type abStreamEcho struct{ websocket.BaseHandler }

func (abStreamEcho) OnMessageStart(c *websocket.Conn, typ websocket.MessageType) {
	w, err := c.NextWriter(typ)
	if err != nil {
		w = nil // the connection is closing
	}
	c.SetContext(w)
}

func (abStreamEcho) OnMessageData(c *websocket.Conn, chunk []byte, final bool) {
	w, _ := c.Context().(io.WriteCloser)
	if w == nil {
		return
	}
	w.Write(chunk)
	if final {
		w.Close()
		c.SetContext(nil)
	}
}

// startEcho starts an echo server at /ws on httpd.Server, on an
// ephemeral port of 127.0.0.1, and returns its URL.
func startEcho(t *testing.T, mode websocket.CompressionMode, useTLS bool) string {
	t.Helper()
	return startEchoWith(t, abEcho{}, mode, useTLS)
}

// startEchoWith is startEcho with the echo handler h.
func startEchoWith(t *testing.T, h websocket.Handler, mode websocket.CompressionMode, useTLS bool) string {
	t.Helper()
	up := &websocket.Upgrader{Options: websocket.Options{
		Handler:     h,
		ReadLimit:   abLimit,
		MaxQueued:   abLimit,
		Compression: mode,
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		if _, err := up.Upgrade(w, r, nil); err != nil {
			t.Logf("upgrade: %v", err)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &httpd.Server{Handler: mux}
	scheme := "ws"
	if useTLS {
		// wstest's fuzzingclient checks no certificate (it uses Twisted's
		// ClientContextFactory unless the spec names a "hostname").
		s.TLSConfig = tlstest.Get().ServerConfig()
		scheme = "wss"
		go s.ServeTLS(ln, "", "")
	} else {
		go s.Serve(ln)
	}
	t.Cleanup(func() { s.Close() })
	return scheme + "://" + ln.Addr().String() + "/ws"
}

// TestAutobahnServer runs wstest's fuzzingclient, every case, against
// gale's echo servers, one wstest per agent.
func TestAutobahnServer(t *testing.T) {
	needAutobahn(t)
	t.Parallel()
	wstest := wstestCmd(t)
	version := wstestVersion(wstest)
	t.Logf("wstest: %s", version)
	ctx, cancel := context.WithTimeout(context.Background(), abTimeout(t))
	defer cancel()

	stream := func() abTarget {
		return abTarget{"gale-stream", startEchoWith(t, abStreamEcho{}, websocket.CompressionEnabled, false)}
	}
	var targets []abTarget
	switch {
	case abStreamOnly():
		targets = []abTarget{stream()}
	case abAll():
		targets = []abTarget{{"gale", startEcho(t, websocket.CompressionEnabled, false)},
			{"gale-tls", startEcho(t, websocket.CompressionEnabled, true)},
			{"gale-takeover", startEcho(t, websocket.CompressionContextTakeover, false)},
			stream()}
	default:
		targets = []abTarget{{"gale", startEcho(t, websocket.CompressionEnabled, false)}}
	}
	root := backendtest.TempDir(t)
	runs := make([]*abRun, len(targets))
	var fs []func()
	for i, target := range targets {
		fs = append(fs, func() { runs[i] = runFuzzingClient(ctx, wstest, root, target) })
	}
	start := time.Now()
	runParallel(fs...)
	t.Logf("all agents: %v", time.Since(start).Round(time.Second))
	for _, run := range runs {
		run.check(t, abCaseCount, version)
	}
	writeReport(t, os.Getenv("GALE_AUTOBAHN_REPORT"), "Autobahn testsuite: gale's WebSocket server", version, runs)
}

// TestAutobahnClient runs wstest's fuzzingserver, every case, against
// gale's echo clients, one wstest per agent.
func TestAutobahnClient(t *testing.T) {
	needAutobahn(t)
	if abStreamOnly() {
		t.Skip("GALE_AUTOBAHN=stream runs the server's streaming agent only")
	}
	t.Parallel()
	wstest := wstestCmd(t)
	version := wstestVersion(wstest)
	ctx, cancel := context.WithTimeout(context.Background(), abTimeout(t))
	defer cancel()

	agents := []struct {
		name string
		mode websocket.CompressionMode
	}{
		{"gale-client", websocket.CompressionEnabled},
	}
	if abAll() {
		agents = append(agents, struct {
			name string
			mode websocket.CompressionMode
		}{"gale-client-takeover", websocket.CompressionContextTakeover})
	}
	root := backendtest.TempDir(t)
	runs := make([]*abRun, len(agents))
	var fs []func()
	for i, a := range agents {
		e, err := websocket.NewEngine(engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Stop() })
		client := abDialer{mode: a.mode, engine: e}
		fs = append(fs, func() { runs[i] = runFuzzingServer(ctx, t, wstest, root, a.name, client, abPerCase) })
	}
	start := time.Now()
	runParallel(fs...)
	t.Logf("all agents: %v", time.Since(start).Round(time.Second))
	for _, run := range runs {
		run.check(t, abCaseCount, version)
	}
	writeReport(t, os.Getenv("GALE_AUTOBAHN_REPORT"), "Autobahn testsuite: gale's WebSocket client", version, runs)
}

// abDialer is gale's client, for the fuzzing server.
type abDialer struct {
	mode   websocket.CompressionMode
	engine *engine.Engine
}

func (d abDialer) Run(ctx context.Context, url string, echo bool) ([][]byte, error) {
	h := &abClientHandler{echo: echo, done: make(chan struct{})}
	dialer := &websocket.Dialer{Options: websocket.Options{
		Handler:     h,
		ReadLimit:   abLimit,
		MaxQueued:   abLimit,
		Compression: d.mode,
		Engine:      d.engine,
	}}
	c, _, err := dialer.Dial(ctx, url)
	if err != nil {
		return nil, err
	}
	select {
	case <-h.done:
	case <-ctx.Done():
		c.CloseNow()
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			return h.messages(), errors.New("OnClose did not run within 10 s of CloseNow")
		}
		return h.messages(), ctx.Err()
	}
	var ce *websocket.CloseError
	var pe *websocket.ProtocolError
	if errors.As(h.err, &ce) || errors.As(h.err, &pe) || errors.Is(h.err, websocket.ErrReadLimit) {
		// The peer closed it, or we did, for what the case sent: the
		// case's end (wstest judges it).
		return h.messages(), nil
	}
	return h.messages(), h.err
}

// abClientHandler echoes the messages back, or keeps them, until the
// connection closes.
type abClientHandler struct {
	websocket.BaseHandler
	echo bool
	done chan struct{}
	mu   sync.Mutex
	msgs [][]byte
	err  error // OnClose's, once done is closed
}

func (h *abClientHandler) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	if h.echo {
		c.WriteMessage(typ, data)
		return
	}
	h.mu.Lock()
	h.msgs = append(h.msgs, append([]byte(nil), data...))
	h.mu.Unlock()
}

func (h *abClientHandler) OnClose(c *websocket.Conn, err error) {
	h.err = err
	close(h.done)
}

func (h *abClientHandler) messages() [][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.msgs
}

// TestAutobahnSpecs checks, in every run, what the suite's verdict rests
// on: the spec templates run every case with no exclusion, and the
// harness orders case ids and judges behaviors as wstest means them.
func TestAutobahnSpecs(t *testing.T) {
	for _, name := range []string{"fuzzingclient.json", "fuzzingserver.json"} {
		if _, err := abSpec(name); err != nil {
			t.Error(err)
		}
	}
	ids := []string{"12.1.1", "1.1.10", "9.7.6", "1.1.2", "10.1.1", "1.1.1"}
	slices.SortFunc(ids, func(a, b string) int {
		if caseLess(a, b) {
			return -1
		}
		return 1
	})
	if want := []string{"1.1.1", "1.1.2", "1.1.10", "9.7.6", "10.1.1", "12.1.1"}; !slices.Equal(ids, want) {
		t.Errorf("case order %v, want %v", ids, want)
	}
	run := &abRun{Agent: "a", Results: map[string]abResult{
		"1.1.1":  {Behavior: "OK", BehaviorClose: "OK"},
		"6.4.1":  {Behavior: "NON-STRICT", BehaviorClose: "OK"},
		"7.1.6":  {Behavior: "INFORMATIONAL", BehaviorClose: "INFORMATIONAL"},
		"7.9.1":  {Behavior: "OK", BehaviorClose: "WRONG CODE"},
		"5.1":    {Behavior: "FAILED", BehaviorClose: "OK"},
		"12.1.1": {Behavior: "UNIMPLEMENTED", BehaviorClose: "OK"},
		"2.10":   {Behavior: "OK", BehaviorClose: "UNCLEAN"},
	}}
	var failing []string
	for _, v := range run.failures() {
		failing = append(failing, v.ID)
	}
	if want := []string{"2.10", "5.1", "7.9.1", "12.1.1"}; !slices.Equal(failing, want) {
		t.Errorf("failing cases %v, want %v", failing, want)
	}
}
