package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
)

const testTimeout = 10 * time.Second

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

// expect reads len(want) bytes and checks they are want.
func (c *client) expect(req []byte, want string) {
	c.t.Helper()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c.r, got); err != nil {
		c.t.Fatalf("reply to %.60q: %v after %.60q, want %.60q", req, err, got, want)
	}
	if string(got) != want {
		c.t.Fatalf("reply to %.60q = %.200q, want %.200q", req, got, want)
	}
}

func (c *client) write(b []byte) {
	c.t.Helper()
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// expectEOF checks that the server closed the connection.
func (c *client) expectEOF() {
	c.t.Helper()
	if b, err := c.r.ReadByte(); err != io.EOF {
		c.t.Fatalf("read after close = %q, %v, want EOF", b, err)
	}
}

func TestCommands(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 2})
	for _, tc := range []struct {
		req, reply string
		closes     bool
	}{
		{req: "PING\r\n", reply: "+PONG\r\n"},
		{req: "ping\n", reply: "+PONG\r\n"},
		{req: "*1\r\n$4\r\nPING\r\n", reply: "+PONG\r\n"},
		{req: "*2\r\n$4\r\nPING\r\n$5\r\nhello\r\n", reply: "$5\r\nhello\r\n"},
		{req: "PING hello\r\n", reply: "$5\r\nhello\r\n"},
		{req: "PING a b\r\n", reply: "-ERR wrong number of arguments for 'ping' command\r\n"},
		{req: "ECHO hi\r\n", reply: "$2\r\nhi\r\n"},
		{req: "GET nokey\r\n", reply: "$-1\r\n"},
		{req: "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n", reply: "+OK\r\n"},
		{req: "*2\r\n$3\r\nGET\r\n$1\r\na\r\n", reply: "$1\r\n1\r\n"},
		{req: "set a longer-value\r\n", reply: "+OK\r\n"},
		{req: "get a\r\n", reply: "$12\r\nlonger-value\r\n"},
		{req: "*3\r\n$3\r\nSET\r\n$4\r\nb\r\nc\r\n$2\r\n\x00\n\r\n", reply: "+OK\r\n"}, // binary key and value
		{req: "*2\r\n$3\r\nGET\r\n$4\r\nb\r\nc\r\n", reply: "$2\r\n\x00\n\r\n"},
		{req: "SET empty \r\n", reply: "-ERR wrong number of arguments for 'set' command\r\n"},
		{req: "*3\r\n$3\r\nSET\r\n$5\r\nempty\r\n$0\r\n\r\n", reply: "+OK\r\n"},
		{req: "GET empty\r\n", reply: "$0\r\n\r\n"},
		{req: "SET a b EX 10\r\n", reply: "-ERR syntax error\r\n"},
		{req: "GET\r\n", reply: "-ERR wrong number of arguments for 'get' command\r\n"},
		{req: "DEL a nokey empty\r\n", reply: ":2\r\n"},
		{req: "GET a\r\n", reply: "$-1\r\n"},
		{req: "COMMAND DOCS\r\n", reply: "*0\r\n"},
		{req: "CONFIG GET save\r\n", reply: "*2\r\n$4\r\nsave\r\n$0\r\n\r\n"},
		{req: "CONFIG GET appendonly\r\n", reply: "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n"},
		{req: "CONFIG GET maxmemory\r\n", reply: "*0\r\n"},
		{req: "CONFIG SET save x\r\n", reply: "+OK\r\n"},
		{req: "CONFIG\r\n", reply: "-ERR wrong number of arguments for 'config' command\r\n"},
		{req: "FLUSHALL\r\n", reply: "-ERR unknown command 'FLUSHALL', with args beginning with: \r\n"},
		{req: "*3\r\n$3\r\nfoo\r\n$3\r\na\rb\r\n$1\r\nc\r\n", reply: "-ERR unknown command 'foo', with args beginning with: 'a b' 'c' \r\n"},
		{req: "\r\n*0\r\n*-1\r\n  \r\nPING\r\n", reply: "+PONG\r\n"}, // empty commands get no reply
		{req: "*1\r\nx", reply: "-ERR Protocol error: expected '$', got 'x'\r\n", closes: true},
		{req: "*x\r\n", reply: "-ERR Protocol error: invalid multibulk length\r\n", closes: true},
		{req: "*1\r\n$-1\r\n", reply: "-ERR Protocol error: invalid bulk length\r\n", closes: true},
		{req: "PING\r\n*1\r\n$9999999999\r\n", reply: "+PONG\r\n-ERR Protocol error: invalid bulk length\r\n", closes: true},
		{req: strings.Repeat("x", maxInline), reply: "-ERR Protocol error: too big inline request\r\n", closes: true},
		{req: "QUIT\r\nPING\r\n", reply: "+OK\r\n", closes: true},
	} {
		c := dial(t, addr)
		c.write([]byte(tc.req))
		c.expect([]byte(tc.req), tc.reply)
		if tc.closes {
			c.expectEOF()
		}
		c.conn.Close()
	}
}

// script is a run of commands in both forms of the protocol, with the
// replies they must get: a map stands for the server's store. Its keys
// start with prefix, which no other script of the test may share.
func script(prefix string, n int) (req, reply []byte) {
	m := map[string][]byte{}
	for i := range n {
		key := fmt.Appendf(nil, "%s:%d", prefix, i%7)
		val := bytes.Repeat([]byte{'a' + byte(i%26)}, i%50)
		switch i % 5 {
		case 0, 3:
			req = append(req, multibulk([]byte("SET"), key, val)...)
			reply = append(reply, "+OK\r\n"...)
			m[string(key)] = val
		case 1:
			req = append(req, multibulk([]byte("GET"), key)...)
			if v, ok := m[string(key)]; ok {
				reply = appendBulk(reply, v)
			} else {
				reply = append(reply, "$-1\r\n"...)
			}
		case 2:
			req = append(req, "PING\r\nGET "...)
			req = append(req, key...)
			req = append(req, "\r\n"...)
			reply = append(reply, "+PONG\r\n"...)
			if v, ok := m[string(key)]; ok {
				reply = appendBulk(reply, v)
			} else {
				reply = append(reply, "$-1\r\n"...)
			}
		case 4:
			req = append(req, multibulk([]byte("DEL"), key)...)
			_, ok := m[string(key)]
			reply = appendInt(reply, map[bool]int{true: 1}[ok])
			delete(m, string(key))
		}
	}
	return req, reply
}

func TestScriptSelfCheck(t *testing.T) {
	// script's replies are right if a server that gets them all at once
	// agrees.
	req, reply := script("k", 50)
	if got, closed := feed(newServer(), req); !bytes.Equal(got, reply) || closed {
		t.Fatalf("feed(script) = %q, %v, want %q, false", got, closed, reply)
	}
}

func TestPipeline(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 2})
	// Far more than a read buffer of requests, and a flushSize of
	// replies, in one write; the client reads while it writes.
	for round := range 3 {
		req, reply := script(fmt.Sprint(round), 20000)
		c := dial(t, addr)
		errc := make(chan error, 1)
		go func() {
			_, err := c.conn.Write(req)
			errc <- err
		}()
		c.expect(fmt.Appendf(nil, "round %d", round), string(reply))
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		c.conn.Close()
	}
}

// TestPartialFrames cuts a run of commands in two at every byte. After
// the first piece, a round trip on a second connection of the same loop
// shows that the loop has run since the piece arrived, so the server saw
// it on its own.
func TestPartialFrames(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 1})
	probe := dial(t, addr)
	first, _ := script("0000", 10)
	for k := range len(first) + 1 {
		req, reply := script(fmt.Sprintf("%04d", k), 10) // all as long as first
		c := dial(t, addr)
		c.write(req[:k])
		probe.write([]byte("PING\r\n"))
		probe.expect([]byte("PING"), "+PONG\r\n")
		c.write(req[k:])
		c.expect(fmt.Appendf(nil, "script cut at %d", k), string(reply))
		c.conn.Close()
	}
}

// TestBytewise has the server see each byte of its requests on its own,
// with a round trip on a second connection after each.
func TestBytewise(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 1})
	c, probe := dial(t, addr), dial(t, addr)
	req := multibulk([]byte("SET"), []byte("k"), []byte("v\r\n"))
	req = append(req, "GET k\r\n"...)
	for i := range req {
		c.write(req[i : i+1])
		probe.write([]byte("PING\r\n"))
		probe.expect([]byte("PING"), "+PONG\r\n")
	}
	c.expect(req, "+OK\r\n$3\r\nv\r\n\r\n")
}

func TestLargeValue(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 2})
	c := dial(t, addr)
	val := bytes.Repeat([]byte("0123456789abcdef"), (3<<20)/16) // 3 MiB: many reads
	req := multibulk([]byte("SET"), []byte("big"), val)
	c.write(req)
	c.expect([]byte("SET big"), "+OK\r\n")
	get := []byte("GET big\r\nGET big\r\n")
	c.write(get)
	want := appendBulk(nil, val)
	c.expect(get, string(want)+string(want))

	// A bulk string over the limit is refused once its header is read.
	c.write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + strconv.Itoa(maxBulk+1) + "\r\n"))
	c.expect([]byte("SET k <too big>"), "-ERR Protocol error: invalid bulk length\r\n")
	c.expectEOF()
}

func TestConcurrentClients(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 2})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := setGetClient(addr, i); err != nil {
				t.Errorf("client %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
}

// setGetClient sets keys of its own and a shared one, pipelined, and
// reads its keys back.
func setGetClient(addr net.Addr, id int) error {
	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(testTimeout))
	var req, want []byte
	for j := range 500 {
		key := fmt.Appendf(nil, "c%d:%d", id, j%10)
		val := fmt.Appendf(nil, "v%d", j)
		req = append(req, multibulk([]byte("SET"), key, val)...)
		req = append(req, multibulk([]byte("SET"), []byte("shared"), val)...)
		req = append(req, multibulk([]byte("GET"), key)...)
		want = append(want, "+OK\r\n+OK\r\n"...)
		want = appendBulk(want, val)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Write(req)
		errc <- err
	}()
	got := make([]byte, len(want))
	_, rerr := io.ReadFull(conn, got)
	if err := <-errc; err != nil {
		return err
	}
	if rerr != nil {
		return rerr
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("replies = %.80q..., want %.80q...", got, want)
	}
	return nil
}

// startServer starts the server on a free loopback port and shuts it down
// when the test ends.
func startServer(t testing.TB, opts engine.Options) (*engine.Engine, net.Addr) {
	t.Helper()
	e, addr, err := serve("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown = %v, want nil", err)
		}
	})
	return e, addr
}

// A 5 MiB SET, under the server's own limits (maxBulk, maxRequest) but
// over the engine's default MaxInputBuffer (4 MiB), is served: the engine
// is given room for the server's limits, which answer first.
func TestSetPastEngineDefault(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{})
	c := dial(t, addr)
	val := bytes.Repeat([]byte("v"), 5<<20)
	c.write(multibulk([]byte("SET"), []byte("big"), val))
	c.expect([]byte("SET big <5 MiB>"), "+OK\r\n")
}

// Past the engine's cap (here set below the server's own), the client is
// told why before the connection closes.
func TestEngineLimitSaysSo(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{MaxInputBuffer: 1 << 20})
	c := dial(t, addr)
	c.write([]byte("PING\r\n"))
	c.expect([]byte("PING"), "+PONG\r\n")
	go c.conn.Write(multibulk([]byte("SET"), []byte("big"), bytes.Repeat([]byte("v"), 2<<20)))
	c.expect([]byte("SET big <2 MiB>"), "-ERR Protocol error: too big request\r\n")
}
