package httpd_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// sseServe serves event streams on a loopback port: each request's
// stream is opened with opts and handed to got, after the handler
// returned (or, for held streams, while Serve holds it). It returns the
// address.
func sseServe(t *testing.T, srv *httpd.Server, opts httpd.EventStreamOptions, got chan<- *httpd.Stream) string {
	t.Helper()
	return start(t, srv, sseHandler(t, opts, got))
}

func sseHandler(t *testing.T, opts httpd.EventStreamOptions, got chan<- *httpd.Stream) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := httpd.EventStream(w, r, opts)
		if err != nil {
			t.Errorf("EventStream: %v", err)
			return
		}
		got <- s
		s.Serve()
	})
}

// sseEvent is an event as a client parses it (§9.2.6), with the comment
// lines that came before it.
type sseEvent struct {
	id, typ, data string
	retry         string
	comments      int
}

// readEvent reads the next event that a browser would dispatch, or
// that sets an ID or a retry.
func readEvent(br *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	var data []string
	seen := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if !seen {
				continue
			}
			ev.data = strings.Join(data, "\n")
			return ev, nil
		}
		if strings.HasPrefix(line, ":") {
			ev.comments++
			continue
		}
		seen = true
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "id":
			ev.id = value
		case "event":
			ev.typ = value
		case "data":
			data = append(data, value)
		case "retry":
			ev.retry = value
		}
	}
}

// sseGet opens a stream at addr with net/http's client.
func sseGet(t *testing.T, addr string, lastID string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

// sseCases are events and what a client reads of them.
var sseCases = []struct {
	ev   httpd.Event
	want sseEvent
}{
	{httpd.Event{Data: "hello"}, sseEvent{data: "hello"}},
	{httpd.Event{ID: "7", Event: "tick", Data: "a\nb\r\nc\rd"}, sseEvent{id: "7", typ: "tick", data: "a\nb\nc\nd"}},
	{httpd.Event{Data: " leading space\n\ntrailing\n"}, sseEvent{data: " leading space\n\ntrailing\n"}},
	{httpd.Event{Data: "r", Retry: 1500 * time.Millisecond}, sseEvent{data: "r", retry: "1500"}},
	{httpd.Event{Event: "empty"}, sseEvent{typ: "empty"}},
	{httpd.Event{ID: "id only"}, sseEvent{id: "id only"}},
	{httpd.Event{Data: "é: ünïcode"}, sseEvent{data: "é: ünïcode"}},
}

// TestSSEFraming: events sent after the handler returned come framed as
// the standard says, with the response's head, to net/http's client.
func TestSSEFraming(t *testing.T) { backendtest.Run(t, testSSEFraming) }

func testSSEFraming(t *testing.T) {
	got := make(chan *httpd.Stream, 1)
	addr := sseServe(t, nil, httpd.EventStreamOptions{Retry: 2 * time.Second}, got)
	resp, br := sseGet(t, addr, "41")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q, want text/event-stream", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control = %q, want no-cache", cc)
	}
	s := <-got
	if id := s.LastEventID(); id != "41" {
		t.Errorf("LastEventID() = %q, want 41", id)
	}
	ev, err := readEvent(br)
	if err != nil || ev.retry != "2000" {
		t.Fatalf("first event = %+v, %v; want retry 2000", ev, err)
	}
	for _, c := range sseCases {
		if err := s.Send(c.ev); err != nil {
			t.Fatalf("Send(%+v) = %v", c.ev, err)
		}
		ev, err := readEvent(br)
		if err != nil || ev != c.want {
			t.Errorf("Send(%+v): read %+v, %v; want %+v", c.ev, ev, err, c.want)
		}
	}
	for _, bad := range []httpd.Event{{ID: "a\nb"}, {ID: "a\x00"}, {Event: "x\ry"}} {
		if err := s.Send(bad); !errors.Is(err, httpd.ErrInvalidEvent) {
			t.Errorf("Send(%+q) = %v, want ErrInvalidEvent", bad, err)
		}
	}
	s.Close()
	if _, err := readEvent(br); err != io.EOF {
		t.Errorf("after Close, read %v, want io.EOF", err)
	}
	<-s.Done()
	if err := s.Err(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Err() = %v, want net.ErrClosed", err)
	}
	if err := s.Send(httpd.Event{Data: "late"}); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Send after Close = %v, want net.ErrClosed", err)
	}
}

// TestSSEClientGoes: Done closes when the client goes, and OnClose is
// called, with the client's end.
func TestSSEClientGoes(t *testing.T) { backendtest.Run(t, testSSEClientGoes) }

func testSSEClientGoes(t *testing.T) {
	got := make(chan *httpd.Stream, 1)
	closed := make(chan error, 2)
	onClose := func(s *httpd.Stream, err error) { closed <- err }
	addr := sseServe(t, nil, httpd.EventStreamOptions{OnClose: onClose}, got)
	c, br := rawConn(t, addr)
	io.WriteString(c, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
	s := <-got
	c.Close()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done did not close when the client went")
	}
	t.Logf("Err() = %v", s.Err())
	if err := s.Err(); err == nil || errors.Is(err, httpd.ErrQueueFull) {
		t.Errorf("Err() = %v, want the client's end", err)
	}
	if err := <-closed; err != s.Err() {
		t.Errorf("OnClose got %v, want Err's %v", err, s.Err())
	}
	if len(closed) != 0 {
		t.Errorf("OnClose called twice")
	}
}

// TestSSEHeartbeat: heartbeat comments come at the interval, from the
// loop's timer, while no event is sent.
func TestSSEHeartbeat(t *testing.T) { backendtest.Run(t, testSSEHeartbeat) }

func testSSEHeartbeat(t *testing.T) {
	const every = 100 * time.Millisecond
	got := make(chan *httpd.Stream, 1)
	addr := sseServe(t, nil, httpd.EventStreamOptions{Heartbeat: every}, got)
	_, br := sseGet(t, addr, "")
	s := <-got
	t0 := time.Now()
	var at []time.Duration
	for len(at) < 5 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == ":\n" {
			at = append(at, time.Since(t0))
		}
	}
	for i, d := range at {
		want := time.Duration(i+1) * every
		// Early never (a loop timer fires at or after its time); late by
		// a scheduling delay at most, which -race and a shared machine
		// stretch.
		if d < want-every/2 || d > want+4*every {
			t.Errorf("heartbeat %d at %v, want about %v (all: %v)", i, d, want, at)
		}
	}
	s.Close()
}

// TestSSESlowClient: a client that does not read is cut once its queue
// holds MaxQueued bytes, while another stream of the same server goes on
// being served; with DropWhenFull the events are dropped instead.
func TestSSESlowClient(t *testing.T) { backendtest.Run(t, testSSESlowClient) }

func testSSESlowClient(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(fmt.Sprintf("DropWhenFull=%v", drop), func(t *testing.T) {
			const limit = 64 << 10
			got := make(chan *httpd.Stream, 2)
			addr := sseServe(t, nil, httpd.EventStreamOptions{MaxQueued: limit, DropWhenFull: drop}, got)
			// The stalled client's socket takes little: its receive buffer
			// is small, and it never reads.
			stalled, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer stalled.Close()
			stalled.(*net.TCPConn).SetReadBuffer(4 << 10)
			io.WriteString(stalled, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
			slow := <-got
			_, br := sseGet(t, addr, "")
			good := <-got

			data := strings.Repeat("x", 8<<10)
			sent, full := 0, 0
			for i := 0; i < 64<<20/len(data) && full == 0; i++ {
				switch err := slow.Send(httpd.Event{Data: data}); {
				case err == nil:
					sent++
				case errors.Is(err, httpd.ErrQueueFull):
					full++
				default:
					t.Fatalf("Send %d = %v", i, err)
				}
				if i%64 == 0 {
					if err := good.Send(httpd.Event{ID: fmt.Sprint(i), Data: "ok"}); err != nil {
						t.Fatalf("the reading stream's Send = %v", err)
					}
					if ev, err := readEvent(br); err != nil || ev.data != "ok" {
						t.Fatalf("the reading stream read %+v, %v", ev, err)
					}
				}
			}
			t.Logf("%d events of %d bytes queued before ErrQueueFull", sent, len(data))
			if full == 0 {
				t.Fatalf("%d events of %d bytes sent to a client that does not read, and no ErrQueueFull", sent, len(data))
			}
			if drop {
				if err := slow.Err(); err != nil {
					t.Fatalf("with DropWhenFull, the stream ended: %v", err)
				}
				slow.Close()
				return
			}
			select {
			case <-slow.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the stalled stream was not cut")
			}
			if err := slow.Err(); err != httpd.ErrQueueFull {
				t.Errorf("Err() = %v, want ErrQueueFull", err)
			}
			if err := good.Send(httpd.Event{Data: "still"}); err != nil {
				t.Fatal(err)
			}
			if ev, err := readEvent(br); err != nil || ev.data != "still" {
				t.Fatalf("the reading stream read %+v, %v", ev, err)
			}
			good.Close()
		})
	}
}

// TestSSECloseStalled: a stream closed with events queued for a client
// that does not read them ends once the close's bound passed.
func TestSSECloseStalled(t *testing.T) { backendtest.Run(t, testSSECloseStalled) }

func testSSECloseStalled(t *testing.T) {
	defer httpd.SetStreamCloseWait(200 * time.Millisecond)()
	got := make(chan *httpd.Stream, 1)
	addr := sseServe(t, nil, httpd.EventStreamOptions{MaxQueued: 1 << 20, DropWhenFull: true}, got)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4 << 10)
	io.WriteString(c, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
	s := <-got
	data := strings.Repeat("x", 8<<10)
	for i := 0; i < 64<<20/len(data); i++ {
		if s.Send(httpd.Event{Data: data}) != nil {
			break
		}
	}
	t0 := time.Now()
	s.Close()
	select {
	case <-s.Done():
		t.Logf("ended %v after Close: %v", time.Since(t0), s.Err())
	case <-time.After(10 * time.Second):
		t.Fatal("a closed stream whose client does not read did not end")
	}
}

// TestSSEIdleGoroutines: idle loop-held streams hold no goroutine.
func TestSSEIdleGoroutines(t *testing.T) { backendtest.Run(t, testSSEIdleGoroutines) }

func testSSEIdleGoroutines(t *testing.T) {
	backendtest.SkipOnNet(t, "the net backend reads each connection on a goroutine")
	const n = 200
	got := make(chan *httpd.Stream, n)
	addr := sseServe(t, nil, httpd.EventStreamOptions{}, got)
	// One warm-up stream starts the loops and the handler pool.
	conns := make([]net.Conn, 0, n+1)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	open := func() {
		c, br := rawConn(t, addr)
		conns = append(conns, c)
		io.WriteString(c, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
		if _, err := http.ReadResponse(br, nil); err != nil {
			t.Fatal(err)
		}
	}
	open()
	streams := []*httpd.Stream{<-got}
	before := settledGoroutines()
	for range n {
		open()
		streams = append(streams, <-got)
	}
	after := settledGoroutines()
	t.Logf("goroutines: %d with one stream, %d with %d more", before, after, n)
	if extra := after - before; extra > n/20 {
		t.Errorf("%d idle streams hold %d goroutines more (%d, then %d), want none", n, extra, before, after)
	}
	if m := httpd.Broadcast(streams, httpd.Event{Data: "all"}); m != len(streams) {
		t.Errorf("Broadcast reached %d streams of %d", m, len(streams))
	}
	for _, s := range streams {
		s.Close()
	}
}

// settledGoroutines returns the goroutine count once it has held still
// for 100 ms (handler goroutines return to the pool, then leave it).
func settledGoroutines() int {
	g, still := runtime.NumGoroutine(), 0
	for deadline := time.Now().Add(5 * time.Second); still < 10 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		if ng := runtime.NumGoroutine(); ng != g {
			g, still = ng, 0
		} else {
			still++
		}
	}
	return g
}

// TestSSEConcurrentSend: events sent from many goroutines at once arrive
// whole, every one.
func TestSSEConcurrentSend(t *testing.T) { backendtest.Run(t, testSSEConcurrentSend) }

func testSSEConcurrentSend(t *testing.T) {
	const senders, each = 8, 200
	got := make(chan *httpd.Stream, 1)
	addr := sseServe(t, nil, httpd.EventStreamOptions{MaxQueued: 16 << 20}, got)
	_, br := sseGet(t, addr, "")
	s := <-got
	pe, err := httpd.NewPreparedEvent(httpd.Event{Event: "prepared", Data: "p1\np2"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			for i := range each {
				var err error
				if i%10 == 0 {
					err = s.SendPrepared(pe)
				} else {
					err = s.Send(httpd.Event{ID: fmt.Sprintf("%d-%d", g, i), Data: fmt.Sprintf("line %d\nof %d", i, g)})
				}
				if err != nil {
					t.Errorf("Send: %v", err)
					return
				}
			}
		})
	}
	seen := make(map[string]bool)
	prepared := 0
	for range senders * each {
		ev, err := readEvent(br)
		if err != nil {
			t.Fatal(err)
		}
		if ev.typ == "prepared" {
			if ev.data != "p1\np2" {
				t.Fatalf("prepared event read as %+v", ev)
			}
			prepared++
			continue
		}
		var g, i int
		if _, err := fmt.Sscanf(ev.id, "%d-%d", &g, &i); err != nil || ev.data != fmt.Sprintf("line %d\nof %d", i, g) || seen[ev.id] {
			t.Fatalf("read %+v (seen before: %v)", ev, seen[ev.id])
		}
		seen[ev.id] = true
	}
	wg.Wait()
	if prepared != senders*each/10 {
		t.Errorf("%d prepared events, want %d", prepared, senders*each/10)
	}
	s.Close()
}

// TestSSEHeld: on HTTP/2 and on net/http's server, the handler holds the
// stream (Serve), with the same framing, heartbeats and bound.
func TestSSEHeld(t *testing.T) {
	protos := new(http.Protocols)
	protos.SetUnencryptedHTTP2(true)
	for _, tc := range []struct {
		name  string
		serve func(t *testing.T, h http.Handler) string
	}{
		{"h2c", func(t *testing.T, h http.Handler) string {
			p := new(http.Protocols)
			p.SetHTTP1(true)
			p.SetUnencryptedHTTP2(true)
			return start(t, &httpd.Server{Protocols: p}, h)
		}},
		{"net/http", func(t *testing.T, h http.Handler) string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: h}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
			return ln.Addr().String()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan *httpd.Stream, 1)
			addr := tc.serve(t, sseHandler(t, httpd.EventStreamOptions{Heartbeat: 50 * time.Millisecond}, got))
			tr := &http.Transport{Protocols: protos}
			if tc.name == "net/http" {
				tr.Protocols = nil
			}
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
			req.Header.Set("Last-Event-ID", "9")
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if want := map[string]int{"h2c": 2, "net/http": 1}[tc.name]; resp.ProtoMajor != want {
				t.Fatalf("served over %s, want HTTP/%d", resp.Proto, want)
			}
			br := bufio.NewReader(resp.Body)
			s := <-got
			if s.LastEventID() != "9" {
				t.Errorf("LastEventID() = %q", s.LastEventID())
			}
			for _, c := range sseCases {
				if err := s.Send(c.ev); err != nil {
					t.Fatal(err)
				}
				if ev, err := readEvent(br); err != nil || ev.id != c.want.id || ev.data != c.want.data || ev.typ != c.want.typ {
					t.Errorf("Send(%+v): read %+v, %v", c.ev, ev, err)
				}
			}
			for beats := 0; beats < 2; {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if line == ":\n" {
					beats++
				}
			}
			s.Close()
			<-s.Done()
			if _, err := io.Copy(io.Discard, br); err != nil {
				t.Errorf("the body after Close: %v", err)
			}
		})
	}
}

// TestSSEShutdown: Shutdown closes the streams, after what they queued.
func TestSSEShutdown(t *testing.T) { backendtest.Run(t, testSSEShutdown) }

func testSSEShutdown(t *testing.T) {
	got := make(chan *httpd.Stream, 1)
	srv := &httpd.Server{}
	addr, done := listen(t, srv, sseHandler(t, httpd.EventStreamOptions{}, got), (*httpd.Server).Serve)
	_, br := sseGet(t, addr, "")
	s := <-got
	s.Send(httpd.Event{Data: "last"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a stream open: %v", err)
	}
	if err := <-done; err != http.ErrServerClosed {
		t.Errorf("Serve = %v", err)
	}
	if ev, err := readEvent(br); err != nil || ev.data != "last" {
		t.Errorf("read %+v, %v; want the last event", ev, err)
	}
	if _, err := readEvent(br); err != io.EOF {
		t.Errorf("then %v, want io.EOF", err)
	}
}

// TestSSEHeldSlowClient: a stream its handler holds (net/http's server)
// is cut at the bound too: Serve, blocked writing to a client that does
// not read, returns.
func TestSSEHeldSlowClient(t *testing.T) {
	got := make(chan *httpd.Stream, 1)
	served := make(chan struct{})
	h := sseHandler(t, httpd.EventStreamOptions{MaxQueued: 64 << 10}, got)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(served)
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4 << 10)
	io.WriteString(c, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
	s := <-got
	data := strings.Repeat("x", 8<<10)
	full := false
	for i := 0; i < 64<<20/len(data) && !full; i++ {
		full = errors.Is(s.Send(httpd.Event{Data: data}), httpd.ErrQueueFull)
	}
	if !full {
		t.Fatal("no ErrQueueFull for a client that does not read")
	}
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the cut")
	}
	if err := s.Err(); err != httpd.ErrQueueFull {
		t.Errorf("Err() = %v, want ErrQueueFull", err)
	}
}

// TestSSETLS: over TLS, an HTTP/1.1 stream is held on the loop as in the
// clear, and an h2 one by its handler, with the same events.
func TestSSETLS(t *testing.T) { backendtest.Run(t, testSSETLS) }

func testSSETLS(t *testing.T) {
	got := make(chan *httpd.Stream, 1)
	addr, _ := startTLS(t, sseHandler(t, httpd.EventStreamOptions{}, got))
	for _, h2 := range []bool{false, true} {
		tr := &http.Transport{TLSClientConfig: tlstest.Get().ClientConfig(), ForceAttemptHTTP2: h2}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/events")
		if err != nil {
			t.Fatal(err)
		}
		s := <-got
		if err := s.Send(httpd.Event{ID: "1", Data: "over\n" + resp.Proto}); err != nil {
			t.Fatal(err)
		}
		ev, err := readEvent(bufio.NewReader(resp.Body))
		if err != nil || ev.data != "over\n"+resp.Proto || resp.ProtoMajor != map[bool]int{false: 1, true: 2}[h2] {
			t.Errorf("over %s: read %+v, %v", resp.Proto, ev, err)
		}
		s.Close()
		<-s.Done()
		resp.Body.Close()
		tr.CloseIdleConnections()
	}
}

// FuzzSSEEvent: an event that encodes is read back by a client's parser
// (§9.2.6) as it was sent, its data's line breaks as LF; one that does
// not has a line break (or NUL) in its ID or type.
func FuzzSSEEvent(f *testing.F) {
	for _, c := range sseCases {
		f.Add(c.ev.ID, c.ev.Event, c.ev.Data)
	}
	f.Add("a\x00", "", "x")
	f.Add("", "t\r", "x")
	f.Add(" id", ": colon", "data: x\r\r\n\n:y")
	f.Fuzz(func(t *testing.T, id, typ, data string) {
		ev := httpd.Event{ID: id, Event: typ, Data: data}
		pe, err := httpd.NewPreparedEvent(ev)
		bad := strings.ContainsAny(id, "\r\n\x00") || strings.ContainsAny(typ, "\r\n")
		if bad != (err != nil) {
			t.Fatalf("NewPreparedEvent(%+q) = %v", ev, err)
		}
		if bad {
			return
		}
		got, err := readEvent(bufio.NewReader(strings.NewReader(string(httpd.PreparedBytes(pe)))))
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(data)
		if err != nil || got.id != id || got.typ != typ || got.data != want {
			t.Fatalf("%+q read back as %+v, %v", ev, got, err)
		}
	})
}
