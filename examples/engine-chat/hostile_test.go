package main

// A hostile client that sends a line without end: bytes and never a
// newline (internal/floodtest). The server must refuse it once it passes
// -max-line, say so and close the connection, keeping its memory bounded,
// while well-behaved clients go on chatting at their pace.

import (
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/internal/backendtest"
	"github.com/galeio/gale/internal/floodtest"
	"github.com/galeio/gale/internal/leaktest"
)

// floodGood is the number of well-behaved clients, floodLines the lines
// each sends per measurement.
const floodGood, floodLines = 4, 200

// TestHostileNoNewline runs floodtest against the server: a line that
// never ends (the first, the nickname) must be refused with the error
// after about -max-line bytes, with memory bounded, while well-behaved
// clients keep most of their chat throughput.
func TestHostileNoNewline(t *testing.T) { backendtest.Run(t, testHostileNoNewline) }

func testHostileNoNewline(t *testing.T) {
	leaktest.Check(t)
	cfg := testConfig(t)
	cfg.log = discardLog
	srv := newServer(cfg)
	e, addr := startServer(t, cfg)
	room := newChatters(t, addr, floodGood)
	floodtest.Run(t, floodtest.Target{
		Addr:    addr,
		BytesIn: func() uint64 { return e.Stats().Total().BytesIn },
		Cap:     cfg.maxLine,
		CapName: "-max-line",
		Refused: func(reply []byte) bool { return string(reply) == msgWelcome+string(srv.msgTooLong) },
		Want:    strconv.Quote(msgWelcome + string(srv.msgTooLong)),
		Good:    func(t *testing.T) float64 { return room.chat(t, floodLines) },
		Unit:    "lines",
		Clients: floodGood,
	})
}

// chatters are clients in a room of their own, who chat in rounds.
type chatters struct {
	clients []*client
	seq     []int   // the number of each one's next line
	last    [][]int // last[i][j]: the number of the last line i read from j
}

// newChatters joins n clients to the server at addr, as c0, c1...
func newChatters(t *testing.T, addr net.Addr, n int) *chatters {
	t.Helper()
	ch := &chatters{seq: make([]int, n), last: make([][]int, n)}
	for i := range n {
		c := join(t, addr, "c"+strconv.Itoa(i))
		for _, other := range ch.clients {
			other.expect("* c" + strconv.Itoa(i) + " joined\n")
		}
		ch.clients = append(ch.clients, c)
		ch.last[i] = make([]int, n)
		for j := range ch.last[i] {
			ch.last[i][j] = -1
		}
	}
	return ch
}

// chat has every client send n lines, each after it read a line from
// every other (or any lines as many), and checks that each reads every
// line of the others, in the order they were sent. It returns the lines
// sent per second, all clients together.
func (ch *chatters) chat(t *testing.T, n int) float64 {
	t.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range ch.clients {
		wg.Go(func() {
			c.conn.SetDeadline(time.Now().Add(testTimeout))
			for range n {
				if _, err := c.conn.Write([]byte(strconv.Itoa(ch.seq[i]) + "\n")); err != nil {
					t.Errorf("c%d line %d: %v", i, ch.seq[i], err)
					return
				}
				ch.seq[i]++
				for range len(ch.clients) - 1 {
					if err := ch.read(i); err != nil {
						t.Errorf("c%d: %v", i, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	return float64(n*len(ch.clients)) / time.Since(start).Seconds()
}

// read reads a line as client i and checks it is the next from its
// sender.
func (ch *chatters) read(i int) error {
	line, err := ch.clients[i].r.ReadString('\n')
	if err != nil {
		return err
	}
	nick, num, ok := strings.Cut(strings.TrimSuffix(line, "\n"), ": ")
	j, err1 := strconv.Atoi(strings.TrimPrefix(nick, "c"))
	k, err2 := strconv.Atoi(num)
	if !ok || err1 != nil || err2 != nil || j < 0 || j >= len(ch.clients) || j == i {
		return &unexpected{line}
	}
	if want := ch.last[i][j] + 1; k != want {
		return fmt.Errorf("read line %d from c%d, want %d", k, j, want)
	}
	ch.last[i][j] = k
	return nil
}

var discardLog = log.New(io.Discard, "", 0)
