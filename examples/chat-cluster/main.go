// Chat-cluster is one instance of a WebSocket chat server on gale, meant
// to run as several behind a load balancer (HAProxy), the instances
// sharing the chat's history through a Redis Stream. run.sh starts Redis,
// three instances and HAProxy on this machine; README.md explains it.
//
//	chat-cluster -addr 127.0.0.1:9001 -redis 127.0.0.1:6379
//
// Each instance serves the WebSocket at /ws (the protocol is event's, in
// room.go), its health at /healthz (for HAProxy's checks) and its
// counters at /metrics (Prometheus' text format).
//
// On SIGTERM or SIGINT the instance drains: /healthz answers 503 at once,
// so that HAProxy, which checks it every 200 ms, sends it no new
// connection; after -drain, httpd.Server.Shutdown closes every WebSocket
// with 1012 (service restart), and the clients reconnect through HAProxy
// to the other instances, naming the last message they received so that
// they are sent what they missed. The messages it had received but not
// yet written to Redis are written before it exits.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/websocket"
	"github.com/redis/go-redis/v9"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:9001", "address to listen on, unless a running instance hands its listener over")
	flag.StringVar(&cfg.control, "control", "", "Unix socket of the listener hand-over (package restart); none when empty")
	redisAddr := flag.String("redis", "127.0.0.1:6379", "Redis server's address")
	key := flag.String("stream", "chat", "Redis Stream key of the chat's history")
	flag.DurationVar(&cfg.drain, "drain", time.Second, "time between failing /healthz and closing the connections, on SIGTERM")
	flag.DurationVar(&cfg.grace, "shutdown", 10*time.Second, "time the clients get to close on shutdown")
	flag.StringVar(&cfg.proxy, "proxy", "", "comma-separated prefixes of PROXY protocol senders (HAProxy) whose header is required; none when empty")
	flag.Parse()
	cfg.log = log.New(os.Stderr, fmt.Sprintf("[%s %d] ", cfg.addr, os.Getpid()), log.LstdFlags|log.Lmicroseconds)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rdb := redis.NewClient(&redis.Options{Addr: *redisAddr})
	defer rdb.Close()
	cfg.hist = history{rdb, *key}
	if err := run(ctx, cfg); err != nil {
		cfg.log.Fatal(err)
	}
	cfg.log.Print("bye")
}

// config is an instance's, from its flags.
type config struct {
	log          *log.Logger
	addr         string
	control      string
	hist         history
	proxy        string
	drain, grace time.Duration
}

// run serves until ctx ends or a new process takes the listener over,
// then shuts down.
func run(ctx context.Context, cfg config) error {
	roomCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newRoom(roomCtx, cfg.log, cfg.hist)
	last, err := cfg.hist.last(ctx)
	if err != nil {
		return err
	}
	r.last = last

	var draining atomic.Bool
	srv := newServer(r, &draining)
	if err := setProxyProtocol(srv, cfg.proxy); err != nil {
		return err
	}
	ln, took, err := listen(ctx, cfg.addr, cfg.control)
	if err != nil {
		return err
	}
	cfg.log.Printf("listening on http://%s/ (inherited: %t)", ln.Addr(), took != nil)

	var wg sync.WaitGroup
	stopPub := make(chan struct{})
	for range pubWorkers {
		wg.Go(func() { r.publish(stopPub) })
	}
	wg.Go(func() { r.read(roomCtx) })
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	taken, err := handOver(cfg.control, took, ln)
	if err != nil {
		srv.Close()
		return err
	}
	defer taken.Close()

	select {
	case err := <-served:
		return err
	case <-taken.Taken():
		// The new process accepts on the same socket: nothing to drain.
		cfg.log.Print("listener taken over by a new process")
	case <-ctx.Done():
		// Out of HAProxy's rotation first, then close.
		cfg.log.Printf("draining for %v", cfg.drain)
		draining.Store(true)
		time.Sleep(cfg.drain)
	}
	sctx, scancel := context.WithTimeout(context.Background(), cfg.grace)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		cfg.log.Printf("shutdown: %v; closing the connections left", err)
		srv.Close()
	}
	<-served
	// Every connection is closed: no message comes in any more. Write
	// those still queued to Redis.
	close(stopPub)
	cancel()
	wg.Wait()
	return nil
}

// newServer returns the HTTP server of room r. Its Shutdown closes every
// WebSocket with 1012 (service restart), and waits for them to close.
func newServer(r *room, draining *atomic.Bool) *httpd.Server {
	up := &websocket.Upgrader{
		Options: websocket.Options{
			Handler:   r,
			ReadLimit: readLimit,
			// A client that stops reading is cut once this much waits
			// for it; it catches up from the stream when it is back.
			MaxQueued: 1 << 20,
		},
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(pageFS()))
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, req *http.Request) {
		if _, err := up.Upgrade(w, req, nil); err != nil {
			r.log.Printf("%s: %v", req.RemoteAddr, err)
		}
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, req *http.Request) {
		if draining.Load() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /whoami", func(w http.ResponseWriter, req *http.Request) {
		w.Write([]byte(req.RemoteAddr + "\n"))
	})
	srv := &httpd.Server{
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
	}
	mux.Handle("GET /metrics", metricsHandler(srv, up, r))
	srv.Handler = mux
	srv.RegisterOnShutdown(func() {
		up.Shutdown(context.Background(), websocket.StatusServiceRestart, reasonRestart)
	})
	return srv
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
