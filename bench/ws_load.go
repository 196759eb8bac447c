package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ws-load is one client process of the load generator. It opens -n
// connections to the -url (or spreads them over several, comma-separated),
// each of which echoes one message (so that the server has set up what it
// keeps per connection), and says so on stdout as a JSON line of phase
// "connected". It then obeys its standard input, one word a line:
//
//	echo   run the echo load for -d and print a JSON line of phase "echo"
//	quit   (or the end of stdin, or -life passing) close everything and exit
//
// The echo load is go-websocket-benchmark's BenchEcho: -c request/response
// loops, each sending a -payload byte binary message and waiting for its
// echo before the next; loop i works on connections i, i+c, i+2c... in
// turn, so that every connection carries traffic. Every echo is checked
// byte for byte; its latency goes into a histogram.

// wsLoadOptions are ws-load's flags.
type wsLoadOptions struct {
	urls    []string
	n       int
	src     string // source address, "" for the kernel's choice
	client  string // gale or gorilla
	dialers int
	backend string // gale client: auto, epoll or io_uring
	payload int
	conc    int
	dur     time.Duration
	life    time.Duration
	// keepAlive is the connections' TCP keep-alive period: 0 package
	// net's 15 s, negative off.
	keepAlive time.Duration
}

// wsLoadReport is a ws-load process's output, one JSON line per phase.
type wsLoadReport struct {
	Phase      string  `json:"phase"`
	Client     string  `json:"client"`
	Conns      int     `json:"conns"`
	DialErrors int     `json:"dial_errors,omitempty"`
	FirstError string  `json:"first_error,omitempty"`
	DialSecs   float64 `json:"dial_secs,omitempty"`
	Msgs       int64   `json:"msgs,omitempty"`
	Bad        int64   `json:"bad,omitempty"` // echoes that differed from what was sent
	Lost       int64   `json:"lost,omitempty"`
	Secs       float64 `json:"secs,omitempty"`
	P50us      float64 `json:"p50_us,omitempty"`
	P99us      float64 `json:"p99_us,omitempty"`
	MaxUs      float64 `json:"max_us,omitempty"`
}

// wsLoader is a client implementation: gorilla's (a goroutine per echo
// loop, blocking calls) or gale's (every connection on its loops).
type wsLoader interface {
	// connect opens o.n connections and greets each with one echo; it
	// returns how many are open and the errors met.
	connect(o *wsLoadOptions) (int, []error)
	// echo runs the echo load for o.dur.
	echo(o *wsLoadOptions, st *wsEchoStats) error
	close()
}

func wsLoadMain(args []string) error {
	fs := flag.NewFlagSet("ws-load", flag.ExitOnError)
	var o wsLoadOptions
	urls := fs.String("url", "ws://127.0.0.1:9001/ws", "server URL(s), comma-separated: connections go to each in turn")
	fs.IntVar(&o.n, "n", 1000, "connections")
	fs.StringVar(&o.src, "src", "", "source address (127.0.0.x) of the connections")
	fs.StringVar(&o.client, "client", "gale", "client implementation: gale (gale's Dialer, on loops) or gorilla (gorilla/websocket, a goroutine per echo loop)")
	fs.StringVar(&o.backend, "backend", "auto", "gale client: its engine's backend, auto, epoll or io_uring")
	fs.IntVar(&o.dialers, "dialers", 64, "dials in flight at once")
	fs.IntVar(&o.payload, "payload", 1024, "message size in bytes (at least 8)")
	fs.IntVar(&o.conc, "c", 1000, "echo loops in flight at once")
	fs.DurationVar(&o.dur, "d", 20*time.Second, "echo duration")
	fs.DurationVar(&o.life, "life", 10*time.Minute, "exit after this long whatever happens")
	fs.DurationVar(&o.keepAlive, "keepalive", 0, "TCP keep-alive period of the connections (0: package net's 15 s; negative: off)")
	prof := fs.String("cpuprofile", "", "write a CPU profile to this file")
	fs.Parse(args)
	stopProf, err := wsStartProfile(*prof)
	if err != nil {
		return err
	}
	defer stopProf()
	o.urls = strings.Split(*urls, ",")
	for _, u := range o.urls {
		if err := loopbackURL(u); err != nil {
			return err
		}
	}
	if o.src != "" {
		if err := loopbackOnly(net.JoinHostPort(o.src, "0")); err != nil {
			return err
		}
	}
	o.payload = max(o.payload, 8)
	o.conc = max(1, min(o.conc, o.n))
	var l wsLoader
	switch o.client {
	case "gale":
		l = newGaleLoader()
	case "gorilla":
		l = &gorillaLoader{}
	default:
		return fmt.Errorf("unknown -client %q", o.client)
	}
	time.AfterFunc(o.life, func() {
		fmt.Fprintln(os.Stderr, "ws-load: -life passed, exiting")
		os.Exit(2)
	})
	out := json.NewEncoder(os.Stdout)
	start := time.Now()
	n, errs := l.connect(&o)
	rep := wsLoadReport{Phase: "connected", Client: o.client, Conns: n, DialErrors: len(errs), DialSecs: time.Since(start).Seconds()}
	if len(errs) > 0 {
		rep.FirstError = errs[0].Error()
	}
	out.Encode(rep)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch strings.TrimSpace(in.Text()) {
		case "echo":
			st := newWsEchoStats()
			err := l.echo(&o, st)
			rep := st.report(o.client, n)
			if err != nil {
				rep.FirstError = err.Error()
			}
			out.Encode(rep)
		case "quit":
			l.close()
			return nil
		}
	}
	l.close()
	return nil
}

func loopbackURL(u string) error {
	rest, ok := strings.CutPrefix(u, "ws://")
	if !ok {
		return fmt.Errorf("%s: only ws:// URLs", u)
	}
	host, _, _ := strings.Cut(rest, "/")
	return loopbackOnly(host)
}

// wsPayload makes and checks the messages: an 8-byte header (the
// connection's index and the message's sequence number) and a random body
// fixed for the process.
type wsPayload struct{ body []byte }

func newWsPayload(size int) *wsPayload {
	b := make([]byte, size-8)
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return &wsPayload{body: b}
}

// fill writes message seq of connection idx into buf, which it returns.
func (p *wsPayload) fill(buf []byte, idx, seq uint32) []byte {
	buf = binary.BigEndian.AppendUint32(buf[:0], idx)
	buf = binary.BigEndian.AppendUint32(buf, seq)
	return append(buf, p.body...)
}

// check reports whether msg is message seq of connection idx.
func (p *wsPayload) check(msg []byte, idx, seq uint32) bool {
	return len(msg) == len(p.body)+8 && binary.BigEndian.Uint32(msg) == idx &&
		binary.BigEndian.Uint32(msg[4:]) == seq && bytes.Equal(msg[8:], p.body)
}

var errBadEcho = errors.New("an echo differed from the message sent")

// wsEchoStats are an echo run's counts and latencies, safe for concurrent
// use: a histogram of logarithmic buckets 3 % wide, from 1 µs to minutes.
type wsEchoStats struct {
	msgs, bad, lost atomic.Int64
	maxNs           atomic.Int64
	buckets         [640]atomic.Int64
	secs            float64
	firstErr        atomic.Pointer[error]
}

func newWsEchoStats() *wsEchoStats { return &wsEchoStats{} }

const wsHistBase = 1.03

func (s *wsEchoStats) add(d time.Duration) {
	s.msgs.Add(1)
	us := max(float64(d)/float64(time.Microsecond), 1)
	i := min(int(math.Log(us)/math.Log(wsHistBase)), len(s.buckets)-1)
	s.buckets[i].Add(1)
	for {
		m := s.maxNs.Load()
		if int64(d) <= m || s.maxNs.CompareAndSwap(m, int64(d)) {
			break
		}
	}
}

func (s *wsEchoStats) fail(err error) {
	s.firstErr.CompareAndSwap(nil, &err)
}

// quantile is the upper edge of the bucket holding quantile q, in µs.
func (s *wsEchoStats) quantile(q float64) float64 {
	var n int64
	for i := range s.buckets {
		n += s.buckets[i].Load()
	}
	want := int64(math.Ceil(q * float64(n)))
	var seen int64
	for i := range s.buckets {
		c := s.buckets[i].Load()
		seen += c
		if seen >= want && c > 0 {
			return math.Round(math.Pow(wsHistBase, float64(i+1)))
		}
	}
	return 0
}

func (s *wsEchoStats) report(client string, conns int) wsLoadReport {
	r := wsLoadReport{Phase: "echo", Client: client, Conns: conns, Msgs: s.msgs.Load(), Bad: s.bad.Load(), Lost: s.lost.Load(),
		Secs: s.secs, P50us: s.quantile(0.5), P99us: s.quantile(0.99), MaxUs: float64(s.maxNs.Load() / 1e3)}
	if e := s.firstErr.Load(); e != nil {
		r.FirstError = (*e).Error()
	}
	return r
}

// dialAll runs dial(i) for i in [0, n) with at most par in flight, and
// returns the errors.
func dialAll(n, par int, dial func(i int) error) []error {
	var (
		mu   sync.Mutex
		errs []error
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range max(1, min(par, n)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := dial(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return errs
}

// bindAddressNoPort is a net.Dialer's Control for a dial from a source
// address: the bind takes the address alone and connect picks the port
// (IP_BIND_ADDRESS_NO_PORT), as for a dial without one. Without it, the
// bind's search for a free port checks every socket bound to the address
// and slows each dial as the connections grow past ~100,000.
func bindAddressNoPort(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	}); err != nil {
		return err
	}
	return serr
}
