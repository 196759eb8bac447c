package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// chatters are clients in a room, who chat in rounds.
type chatters struct {
	clients []*client
	seq     []int   // the number of each one's next line
	last    [][]int // last[i][j]: the number of the last line i read from j
	// pad follows the number on each line, to make it longer.
	pad string
	// left[i] lists who client i read had left: clients outside the
	// chatters, whose announcements may come between the lines.
	left [][]string
}

// newChatters joins n clients to the server at addr, as c0, c1...
func newChatters(t testing.TB, addr net.Addr, n int) *chatters {
	t.Helper()
	ch := &chatters{seq: make([]int, n), last: make([][]int, n), left: make([][]string, n)}
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
func (ch *chatters) chat(t testing.TB, n int) float64 {
	t.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range ch.clients {
		wg.Go(func() {
			c.conn.SetDeadline(time.Now().Add(testTimeout))
			for range n {
				if _, err := c.conn.Write([]byte(strconv.Itoa(ch.seq[i]) + ch.pad + "\n")); err != nil {
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
// sender. It notes who left, and reads on.
func (ch *chatters) read(i int) error {
	line, err := ch.clients[i].r.ReadString('\n')
	if err != nil {
		return err
	}
	if nick, ok := strings.CutPrefix(line, "* "); ok {
		if nick, ok = strings.CutSuffix(nick, " left\n"); !ok {
			return &unexpected{line}
		}
		ch.left[i] = append(ch.left[i], nick)
		return ch.read(i)
	}
	nick, text, ok := strings.Cut(strings.TrimSuffix(line, "\n"), ": ")
	j, err1 := strconv.Atoi(strings.TrimPrefix(nick, "c"))
	k, err2 := strconv.Atoi(strings.TrimSuffix(text, ch.pad))
	if !ok || err1 != nil || err2 != nil || j < 0 || j >= len(ch.clients) || j == i {
		return &unexpected{line}
	}
	if want := ch.last[i][j] + 1; k != want {
		return fmt.Errorf("read line %d from c%d, want %d", k, j, want)
	}
	ch.last[i][j] = k
	return nil
}
