package httpd_test

// The memory of idle event streams (issue 37, docs/bench/sse.md): N
// streams open from another process, against httpd's EventStream on
// each backend and against net/http with the usual handler (a goroutine
// per stream that waits on a channel and flushes what comes); the server
// measures what each stream costs it, then sends every stream one event,
// which the client checks arrived on each.
//
//	GALE_SSE=10000 go test -count=1 -run '^TestSSEMeasure$' -v ./httpd/
//
// Without GALE_SSE it measures 100 streams, as go test ./... does. The
// children are TestHostileChild's (sseServerRole, sseClientRole), with
// hostile_measure_linux_test.go's plumbing.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/poller"
)

const (
	sseServerRole = "sse-server"
	sseClientRole = "sse-clients"
)

// sseResult is what a server child measured.
type sseResult struct {
	Server  string
	Streams int
	Stream  hostileCost // per idle stream
}

// TestSSEMeasure measures an idle event stream's cost to httpd's Server
// on each backend and to net/http's.
func TestSSEMeasure(t *testing.T) {
	if os.Getenv(hostileRoleEnv) != "" {
		t.Skip("a child of the measurement")
	}
	n := 100
	if s := os.Getenv("GALE_SSE"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 || n > 19000 {
			t.Fatalf("GALE_SSE=%q: want a count of streams, at most 19,000", s)
		}
	}
	servers := []string{"httpd-epoll", "httpd-io_uring", "net/http"}
	if err := poller.Available(poller.IOURing); err != nil {
		t.Logf("io_uring unavailable here (%v): not measured", err)
		servers = slices.Delete(servers, 1, 2)
	}
	var rows []sseResult
	for _, server := range servers {
		rows = append(rows, sseRun(t, server, n))
	}
	std := rows[len(rows)-1]
	for _, r := range rows[:len(rows)-1] {
		if r.Stream.Goroutines > 0.1 { // a few of the handler pool's may stay
			t.Errorf("%s: %.2f goroutines per idle stream, want none", r.Server, r.Stream.Goroutines)
		}
		if n >= 1000 && r.Stream.RSS > std.Stream.RSS {
			t.Errorf("%s: %.0f B of RSS per idle stream, more than net/http's %.0f", r.Server, r.Stream.RSS, std.Stream.RSS)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d idle event streams; %s, GOMAXPROCS %d, race %v\n", n, runtime.Version(), runtime.GOMAXPROCS(0), raceEnabled)
	fmt.Fprintf(&b, "| server | goroutines | heap | stacks | RSS | RSS vs net/http |\n|---|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		c := r.Stream
		fmt.Fprintf(&b, "| %s | %.2f | %.0f B | %.0f B | %.0f B | %.2f× |\n", r.Server, c.Goroutines, c.Heap, c.Stack, c.RSS, c.RSS/std.Stream.RSS)
	}
	t.Log("\n" + b.String())
}

// sseRun measures server with n idle streams.
func sseRun(t *testing.T, server string, n int) sseResult {
	t.Helper()
	bound := time.Minute + time.Duration(n)*5*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 3*bound)
	t.Cleanup(cancel)
	srv := startChild(t, ctx, hostileRoleEnv+"="+sseServerRole, "GALE_HOSTILE_SERVER="+server)
	addr := srv.next(t, "listening", bound)
	cl := startChild(t, ctx, hostileRoleEnv+"="+sseClientRole, "GALE_HOSTILE_ADDR="+addr, "GALE_HOSTILE_N="+strconv.Itoa(n))
	cl.next(t, "sent", bound)
	fmt.Fprintf(srv.in, "streams %d\n", n)
	var r sseResult
	if err := json.Unmarshal([]byte(srv.next(t, "result", bound)), &r); err != nil {
		t.Fatalf("the server's result: %v", err)
	}
	io.WriteString(srv.in, "send\n")
	srv.next(t, "sent", bound)
	io.WriteString(cl.in, "check\n")
	if got := cl.next(t, "received", bound); got != strconv.Itoa(n) {
		t.Errorf("%s: the event reached %s streams of %d", server, got, n)
	}
	cl.in.Close()
	return r
}

// sseServer serves event streams, says where, measures what n of them
// cost once the parent says they are open, and sends each an event when
// the parent says so.
func sseServer(t *testing.T, server string) {
	var open atomic.Int64
	var mu sync.Mutex
	var streams []*httpd.Stream
	var chans []chan []byte
	var h http.Handler
	if server == "net/http" {
		// The usual net/http handler: a goroutine per stream, waiting on
		// its channel for events to write and flush.
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			ch := make(chan []byte, 1)
			mu.Lock()
			chans = append(chans, ch)
			mu.Unlock()
			open.Add(1)
			for {
				select {
				case <-r.Context().Done():
					return
				case ev := <-ch:
					w.Write(ev)
					w.(http.Flusher).Flush()
				}
			}
		})
	} else {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s, err := httpd.EventStream(w, r, httpd.EventStreamOptions{})
			if err != nil {
				return
			}
			mu.Lock()
			streams = append(streams, s)
			mu.Unlock()
			open.Add(1)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/events", h)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	h = mux
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if server == "net/http" {
		srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
		go srv.Serve(ln)
		defer srv.Close()
	} else {
		srv := &httpd.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
		srv.Engine.Backend = map[string]backend.Kind{"httpd-epoll": backend.Epoll, "httpd-io_uring": backend.IOURing}[server]
		go srv.Serve(ln)
		defer srv.Close()
	}
	timeGETs(t, ln.Addr().String()) // the loops, the pools and the caches warm
	before := sample()
	fmt.Println("hostile: listening", ln.Addr())
	in := bufio.NewReader(os.Stdin)
	line, _ := in.ReadString('\n')
	n, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "streams "))
	settle(t, func() bool { return open.Load() == int64(n) })
	r := sseResult{Server: server, Streams: n, Stream: sample().per(before, n)}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("hostile: result", string(b))
	in.ReadString('\n')
	ev := httpd.Event{ID: "1", Data: "ping"}
	if server == "net/http" {
		pe := []byte("id: 1\ndata: ping\n\n")
		for _, ch := range chans {
			ch <- pe
		}
	} else if m := httpd.Broadcast(streams, ev); m != n {
		t.Errorf("Broadcast reached %d streams of %d", m, n)
	}
	fmt.Println("hostile: sent")
	io.Copy(io.Discard, os.Stdin) // until the parent is done with the client
}

// sseClients opens n streams at addr, reads each response's head, says
// "sent"; then, told "check", reads each stream's event and says how
// many came; it closes them when its input ends.
func sseClients(t *testing.T, addr string, n int) {
	type stream struct {
		c  net.Conn
		br *bufio.Reader
	}
	streams := make([]stream, 0, n)
	defer func() {
		for _, s := range streams {
			s.c.Close()
		}
	}()
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		br := bufio.NewReaderSize(c, 256)
		streams = append(streams, stream{c, br})
		io.WriteString(c, "GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("stream %d: %v", i, err)
		}
	}
	fmt.Println("hostile: sent", n)
	in := bufio.NewReader(os.Stdin)
	in.ReadString('\n')
	got := 0
	for _, s := range streams {
		s.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var seen []byte
		for !bytes.Contains(seen, []byte("data: ping\n")) {
			line, err := s.br.ReadSlice('\n')
			if err != nil {
				break
			}
			seen = append(seen, line...)
		}
		if bytes.Contains(seen, []byte("data: ping\n")) {
			got++
		}
	}
	fmt.Println("hostile: received", got)
	io.Copy(io.Discard, os.Stdin)
}
