package main

import (
	"bufio"
	"context"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// TestMain fails the run if the tests leave goroutines or descriptors
// behind.
func TestMain(m *testing.M) { leaktest.Main(m) }

// testTimeout bounds every wait of the tests.
const testTimeout = 10 * time.Second

// testConfig is the configuration of the tests: the defaults of the
// flags, with timeouts no test reaches unless it shortens them.
func testConfig(t testing.TB) config {
	return config{
		loops:        2,
		maxLine:      4 << 10,
		nickTimeout:  time.Minute,
		idleTimeout:  time.Minute,
		writeTimeout: time.Minute,
		backlog:      256 << 10,
		budget:       64 << 20,
		log:          newTestLog(t).logger(),
	}
}

// startServer starts a chat server on a free loopback port and stops it
// when the test ends.
func startServer(t testing.TB, cfg config) (*engine.Engine, net.Addr) {
	t.Helper()
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	e, addr, err := serve("127.0.0.1:0", newServer(cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return e, addr
}

// client is a test's chat client.
type client struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
}

func dial(t testing.TB, addr net.Addr) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(testTimeout))
	return &client{t: t, conn: c, r: bufio.NewReader(c)}
}

// join dials addr, reads the welcome and joins as nick.
func join(t testing.TB, addr net.Addr, nick string) *client {
	t.Helper()
	c := dial(t, addr)
	c.expect(msgWelcome)
	c.send(nick + "\n")
	c.expect("* hello " + nick + msgHelp)
	return c
}

// send writes s as it is (with its line ends).
func (c *client) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatalf("write %.60q: %v", s, err)
	}
}

// expect reads a line for each of lines, which must be it.
func (c *client) expect(lines ...string) {
	c.t.Helper()
	for _, want := range lines {
		got, err := c.r.ReadString('\n')
		if got != want || err != nil {
			c.t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
}

// expectEOF checks that the server closed the connection.
func (c *client) expectEOF() {
	c.t.Helper()
	if got, err := c.r.ReadString('\n'); got != "" || err != io.EOF {
		c.t.Fatalf("read %q, %v; want end of file", got, err)
	}
}

// who asks who is here and checks the answer is want.
func (c *client) who(want string) {
	c.t.Helper()
	c.send("/who\n")
	c.expect("* here: " + want + "\n")
}

// TestChat runs a conversation: nicknames refused and taken, lines
// broadcast to the others and not echoed, /who, /quit, and the
// announcements.
func TestChat(t *testing.T) { backendtest.Run(t, testChat) }

func testChat(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, testConfig(t))

	alice := dial(t, addr)
	alice.expect(msgWelcome)
	for _, bad := range []string{"", "a b", "a:b", "/who", "\x1b[2J", strings.Repeat("é", maxNick+1), "\xff"} {
		alice.send(bad + "\r\n")
		alice.expect(msgBadNick)
	}
	alice.send("alice\r\n")
	alice.expect("* hello alice" + msgHelp)

	bob := dial(t, addr)
	bob.expect(msgWelcome)
	bob.send("ALICE\n")
	bob.expect("* ALICE is taken; another?\n")
	bob.send("bob\n")
	bob.expect("* hello bob" + msgHelp)
	alice.expect("* bob joined\n")

	// A line goes to the others, not back to its sender: alice's next
	// line is bob's answer.
	alice.send("hi bob\n")
	bob.expect("alice: hi bob\n")
	bob.send("hi alice\r\n")
	alice.expect("bob: hi alice\n")

	carol := join(t, addr, strings.Repeat("é", maxNick))
	c := strings.Repeat("é", maxNick)
	alice.expect("* " + c + " joined\n")
	bob.expect("* " + c + " joined\n")
	carol.who("alice, bob, " + c)

	// Empty lines are ignored, unknown commands refused, control
	// characters defused; lines can come in pieces and several at once.
	carol.send("\n\r\n/nick x\n")
	carol.expect(msgUnknown)
	carol.send("clear\x1b[2J\rbob: fake\n")
	alice.expect(c + ": clear?[2J?bob: fake\n")
	bob.expect(c + ": clear?[2J?bob: fake\n")
	carol.send("one\ntw")
	carol.send("o\nthree\n")
	for _, cl := range []*client{alice, bob} {
		cl.expect(c+": one\n", c+": two\n", c+": three\n")
	}

	// /quit: bob reads the bye then end of file; the others read that he
	// left, and he is gone from /who.
	bob.send("/quit\nnot sent\n")
	bob.expect(msgBye)
	bob.expectEOF()
	alice.expect("* bob left\n")
	carol.expect("* bob left\n")
	alice.who("alice, " + c)

	// Hanging up is leaving too; the nickname is free again.
	carol.conn.Close()
	alice.expect("* " + c + " left\n")
	bob = join(t, addr, "Bob")
	alice.expect("* Bob joined\n")
	bob.who("Bob, alice")

	// /quit before choosing a nickname.
	dave := dial(t, addr)
	dave.expect(msgWelcome)
	dave.send("/quit\n")
	dave.expect(msgBye)
	dave.expectEOF()
}

// testLog collects the server's log, and passes it to the test's.
type testLog struct {
	t     testing.TB
	mu    sync.Mutex
	lines []string
}

func newTestLog(t testing.TB) *testLog { return &testLog{t: t} }

func (l *testLog) logger() *log.Logger { return log.New(l, "", 0) }

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := strings.TrimSuffix(string(p), "\n")
	l.lines = append(l.lines, line)
	l.t.Log("server: " + line)
	return len(p), nil
}

// find returns the first line logged that contains s.
func (l *testLog) find(s string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return line, true
		}
	}
	return "", false
}

// shutdown shuts e down within testTimeout.
func shutdown(e *engine.Engine) error {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	return e.Shutdown(ctx)
}
