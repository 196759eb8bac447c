package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/websocket"
)

func TestMain(m *testing.M) {
	if os.Getenv(envInstance) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRollingRestart runs the deployment of run.sh (Redis, three
// instances, HAProxy), connects clients through HAProxy that send
// numbered messages without pause, restarts the three instances one after
// the other, and checks that no message was lost.
//
// The criterion: every client is welcomed before the first message is
// sent, so every message is after every client's starting point. Each
// client sends seq 1, 2, ... until the restarts are over, resending those
// not acknowledged after each reconnection, and must end with every
// message acknowledged; then every client must have received every
// (client, seq) of every client, its own included, at least once. A
// message received twice (resent after its acknowledgement was lost with
// its connection) is a duplicate, counted and allowed; one never received
// is lost, and fails the test.
func TestRollingRestart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cluster test runs on Linux (Debian's haproxy and redis-server)")
	}
	needTools(t, "haproxy", "redis-server")
	nClients, rate, warm := 20, 100*time.Millisecond, 2*time.Second
	if testing.Short() {
		nClients, warm = 10, time.Second
	}
	ctx := stopContext(t)

	redisAddr := startRedis(t)
	proxy := balancerAddr + "/32"
	dir := t.TempDir()
	insts := make([]instance, 3)
	procs := make([]*process, len(insts))
	addrs := make([]string, len(insts))
	for i := range insts {
		name := fmt.Sprintf("chat%d", i+1)
		insts[i] = instance{name: name, addr: freeAddr(t), control: filepath.Join(dir, name+".sock"), redis: redisAddr, proxy: proxy}
		addrs[i] = insts[i].addr
		procs[i] = insts[i].spawn(t)
		insts[i].waitHealthy(t, procs[i])
	}
	front := freeAddr(t)
	stats := startHAProxy(t, front, addrs)

	d := &websocket.Dialer{Options: websocket.Options{Handler: clientHandler{}, ReadLimit: readLimit}}
	clients := make([]*chatClient, nClients)
	var wg sync.WaitGroup
	cctx, stopClients := context.WithCancel(ctx)
	defer func() { stopClients(); wg.Wait() }()
	for i := range clients {
		clients[i] = newClient(fmt.Sprintf("c%02d", i), "ws://"+front+"/ws", d)
		if i%5 == 0 {
			clients[i].pause = 300 * time.Millisecond
		}
		wg.Go(func() { clients[i].run(cctx) })
	}
	checkWhoami(t, front)
	waitFor(t, 10*time.Second, "every client welcomed", func() error {
		for _, cl := range clients {
			if !cl.isWelcomed() {
				return fmt.Errorf("%s is not", cl.name)
			}
		}
		return nil
	})
	waitFor(t, 5*time.Second, "clients on every instance", func() error {
		for _, a := range addrs {
			if n := metric(t, a, "chat_members"); n == 0 {
				return fmt.Errorf("%s has none", a)
			}
		}
		return nil
	})

	// The load: each client sends every rate until stopSending.
	stopSending := make(chan struct{})
	var sendWG sync.WaitGroup
	for _, cl := range clients {
		sendWG.Go(func() {
			tick := time.NewTicker(rate)
			defer tick.Stop()
			for {
				select {
				case <-stopSending:
					return
				case <-tick.C:
					cl.send()
				}
			}
		})
	}
	began := time.Now()
	time.Sleep(warm)
	// The rolling restart: each instance's new process takes the
	// listener over from the old one, which tells its clients to
	// reconnect (1012) and exits once they have gone.
	for i, in := range insts {
		t0 := time.Now()
		old := procs[i]
		procs[i] = in.spawn(t)
		old.wait(t, 15*time.Second)
		in.waitHealthy(t, procs[i])
		t.Logf("%s handed over in %v", in.name, time.Since(t0).Round(time.Millisecond))
	}
	// Not one connection attempt failed: the kernel's accept queue, one
	// for both processes, held them.
	failed := []string{"econ", "wretr", "wredis"}
	if st := backendStat(t, stats, failed...); st["econ"]+st["wretr"]+st["wredis"] != 0 {
		t.Errorf("HAProxy's connections to the instances during the hand-overs: %v, want none failed", st)
	}
	if !testing.Short() {
		// And the other way: stopped (drained by HAProxy, its clients
		// sent to the others), then started again on its port.
		t0 := time.Now()
		procs[0].stop(t, 15*time.Second)
		procs[0] = insts[0].spawn(t)
		insts[0].waitHealthy(t, procs[0])
		t.Logf("%s stopped and started in %v; HAProxy's connections that failed, retried, redispatched: %v",
			insts[0].name, time.Since(t0).Round(time.Millisecond), backendStat(t, stats, failed...))
	}
	time.Sleep(warm)
	close(stopSending)
	sendWG.Wait()
	sent := make(map[string]uint64, len(clients))
	for _, cl := range clients {
		cl.mu.Lock()
		sent[cl.name] = cl.seq
		cl.mu.Unlock()
	}
	t.Logf("sending for %v", time.Since(began).Round(time.Millisecond))

	// Every message must be acknowledged, then received by every client;
	// the counts are reported either way.
	err := poll(20*time.Second, func() error {
		for _, cl := range clients {
			if n := cl.pending(); n > 0 {
				return fmt.Errorf("%s has %d messages not acknowledged", cl.name, n)
			}
			if lost, _ := cl.missing(sent); lost > 0 {
				return fmt.Errorf("%s lacks %d messages", cl.name, lost)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("not every message acknowledged and received within 20 s: %v", err)
	}
	report(t, clients, sent, addrs, streamLen(t, redisAddr, "chat"))
}

// report logs the counts: messages, deliveries, reconnections and their
// close codes, resends and duplicates; it fails the test on a loss.
func report(t *testing.T, clients []*chatClient, sent map[string]uint64, addrs []string, entries uint64) {
	var msgs uint64
	for _, n := range sent {
		msgs += n
	}
	var lost, dups, reconnects, resent, dialErrs int
	closes := map[websocket.StatusCode]int{}
	for _, cl := range clients {
		l, d := cl.missing(sent)
		lost, dups = lost+l, dups+d
		cl.mu.Lock()
		reconnects += cl.reconnects
		resent += cl.resent
		dialErrs += cl.dialErrs
		for c, n := range cl.closes {
			closes[c] += n
		}
		cl.mu.Unlock()
	}
	var published, replayed uint64
	for _, a := range addrs {
		published += metric(t, a, "chat_published_total")
		replayed += metric(t, a, "chat_replayed_total")
	}
	t.Logf("%d clients sent %d messages; each had to receive all: %d deliveries", len(clients), msgs, msgs*uint64(len(clients)))
	t.Logf("the stream has %d entries: %d messages stored twice (resent after their acknowledgement was lost)", entries, int64(entries)-int64(msgs))
	t.Logf("reconnects %d (close codes %v), dial errors %d, messages resent %d, duplicates received %d, lost %d",
		reconnects, closes, dialErrs, resent, dups, lost)
	t.Logf("since the last restarts: published %d, replayed %d (the new processes' counters only)", published, replayed)
	if lost > 0 {
		t.Errorf("%d deliveries lost", lost)
	}
	if reconnects < 1 {
		t.Errorf("no client reconnected: the restarts did not happen under them")
	}
}

// metric returns the value of the metric named name on the instance at
// addr, 0 when absent.
func metric(t *testing.T, addr, name string) uint64 {
	body, err := get(addr, "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(body) {
		var v uint64
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			fmt.Sscan(rest, &v)
			return v
		}
	}
	return 0
}

// balancerAddr is the address HAProxy connects to the instances from
// (haproxy.cfg.tmpl's source), which they trust for PROXY headers.
const balancerAddr = "127.0.0.2"

// checkWhoami checks that a request through HAProxy reaches an instance
// with the client's address as RemoteAddr, from the PROXY header, not
// HAProxy's own.
func checkWhoami(t *testing.T, front string) {
	t.Helper()
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET /whoami HTTP/1.0\r\nHost: chat\r\n\r\n")
	resp, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(resp), "\r\n\r\n")
	if got, want := strings.TrimSpace(body), c.LocalAddr().String(); got != want {
		t.Errorf("RemoteAddr through HAProxy = %q, want %q (the client's, from the PROXY header)", got, want)
	}
}
