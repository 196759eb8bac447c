package main

// The timeouts run on real time. The engine takes a manual clock only
// through a hook of its own tests (engine.WithClock, in export_test.go),
// so these tests shorten the limits instead, through the server's config,
// which also sets the engine's options: to a second, long enough that a
// loaded machine does not reach them by accident where a test needs it
// not to, and every wait is bounded by testTimeout. They check
// that nothing ends early (the time since the client last sent, taken
// before the server could read it, is at least the limit) and that what
// must end does.

import (
	"strconv"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// shortTimeout is the limit a test shortens.
const shortTimeout = time.Second

// TestNickDeadline checks that a client must send its nickname within
// -nick-timeout: one that sends nothing, one that sends part of a
// nickname and one that sends an invalid one read why, then end of file;
// one that joins in time stays.
func TestNickDeadline(t *testing.T) { backendtest.Run(t, testNickDeadline) }

func testNickDeadline(t *testing.T) {
	leaktest.Check(t)
	cfg := testConfig(t)
	cfg.nickTimeout = shortTimeout
	_, addr := startServer(t, cfg)
	start := time.Now()
	silent, partial, invalid := dial(t, addr), dial(t, addr), dial(t, addr)
	punctual := join(t, addr, "punctual")
	for _, c := range []*client{silent, partial, invalid} {
		c.expect(msgWelcome)
	}
	// Any byte meets a read deadline: the server must set it again.
	partial.send("ali")
	invalid.send("a b\n")
	invalid.expect(msgBadNick)
	for name, c := range map[string]*client{"silent": silent, "partial": partial, "invalid": invalid} {
		c.expect("* no nickname after " + shortTimeout.String() + ", bye\n")
		c.expectEOF()
		if d := time.Since(start); d < shortTimeout {
			t.Errorf("%s client cut %v after connecting, before -nick-timeout %v", name, d, shortTimeout)
		}
	}
	punctual.who("punctual")
}

// TestIdleGoodbye checks -idle: a client that says nothing reads the
// goodbye, then end of file, although it is sent lines all along (it
// listens); one that talks stays, and reads that the other left.
func TestIdleGoodbye(t *testing.T) { backendtest.Run(t, testIdleGoodbye) }

func testIdleGoodbye(t *testing.T) {
	leaktest.Check(t)
	cfg := testConfig(t)
	cfg.idleTimeout = shortTimeout
	_, addr := startServer(t, cfg)
	talker := join(t, addr, "talker")
	quietSent := time.Now() // before its nickname, its last line, reaches the server
	quiet := join(t, addr, "quiet")
	talker.expect("* quiet joined\n")

	// The talker says something every tenth of the timeout, and reads
	// what the room says meanwhile, until quiet is cut.
	left := make(chan error, 1)
	go func() {
		line, err := talker.r.ReadString('\n')
		if err == nil && line != "* quiet left\n" {
			err = &unexpected{line}
		}
		left <- err
	}()
	n := 0
talk:
	for ; n < 50; n++ { // 50 lines: 5 timeouts
		talker.send("line " + strconv.Itoa(n) + "\n")
		select {
		case err := <-left:
			if err != nil {
				t.Fatalf("talker: %v, want \"* quiet left\"", err)
			}
			break talk
		case <-time.After(shortTimeout / 10):
		}
	}
	if n == 50 {
		t.Fatalf("quiet not cut after %d lines, %v apart, with -idle %v", n, shortTimeout/10, shortTimeout)
	}
	for i := 0; ; i++ {
		line, err := quiet.r.ReadString('\n')
		if err != nil {
			t.Fatalf("quiet: %q, %v after %d lines, want the goodbye", line, err, i)
		}
		if line == msgIdle {
			break
		}
		if want := "talker: line " + strconv.Itoa(i) + "\n"; line != want {
			t.Fatalf("quiet read %q, want %q", line, want)
		}
	}
	quiet.expectEOF()
	if d := time.Since(quietSent); d < shortTimeout {
		t.Errorf("quiet cut %v after it last sent, before -idle %v", d, shortTimeout)
	}
	talker.who("talker")
}

// unexpected is a line a test did not expect.
type unexpected struct{ line string }

func (u *unexpected) Error() string { return "read " + strconv.Quote(u.line) }

// TestShutdownGoodbye checks that on Shutdown every client, joined or
// not, reads "* server shutting down" as its last line, then end of
// file, and that Shutdown returns nil. Nobody is told that the others
// leave: they all do.
func TestShutdownGoodbye(t *testing.T) { backendtest.Run(t, testShutdownGoodbye) }

func testShutdownGoodbye(t *testing.T) {
	leaktest.Check(t)
	e, addr := startServer(t, testConfig(t))
	var clients []*client
	for i := range 6 {
		clients = append(clients, join(t, addr, "c"+strconv.Itoa(i)))
		for _, c := range clients[:i] {
			c.expect("* c" + strconv.Itoa(i) + " joined\n")
		}
	}
	stranger := dial(t, addr)
	stranger.expect(msgWelcome)
	clients[0].send("last words\n")
	for _, c := range clients[1:] {
		c.expect("c0: last words\n")
	}
	clients = append(clients, stranger)

	done := make(chan error, 1)
	go func() { done <- shutdown(e) }()
	for i, c := range clients {
		var lines []string
		for {
			line, err := c.r.ReadString('\n')
			if err != nil {
				if line != "" || len(lines) == 0 || lines[len(lines)-1] != msgShutdown {
					t.Errorf("client %d read %q then %q, %v; want %q then end of file", i, lines, line, err, msgShutdown)
				}
				break
			}
			lines = append(lines, line)
		}
		if len(lines) != 1 {
			t.Errorf("client %d read %q, want only %q", i, lines, msgShutdown)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Shutdown = %v, want nil", err)
		}
	case <-time.After(testTimeout):
		t.Fatalf("Shutdown still running after %v", testTimeout)
	}
}
