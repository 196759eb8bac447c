package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"io"
	"log"
	"net"
	"sync"
	"testing"
	"time"
)

const testTimeout = 10 * time.Second

func TestEchoServer(t *testing.T) {
	leaktest.Check(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, ln, log.New(io.Discard, "", 0)) }()
	defer func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("run = %v, want nil after cancel", err)
			}
		case <-time.After(testTimeout):
			t.Fatalf("run did not return within %v of cancel", testTimeout)
		}
	}()

	// Messages longer than the server's 128-byte buffer come back in
	// several pieces; the client reads until it has them all.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := echoClient(ln.Addr().String(), i); err != nil {
				t.Errorf("client %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
}

func echoClient(addr string, id int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	for _, size := range []int{1, 127, 128, 129, 1000, 64 << 10} {
		msg := bytes.Repeat([]byte(fmt.Sprintf("client %d, %d bytes;", id, size)), size/16+1)[:size]
		if _, err := c.Write(msg); err != nil {
			return fmt.Errorf("write of %d bytes: %v", size, err)
		}
		got := make([]byte, size)
		if _, err := io.ReadFull(c, got); err != nil {
			return fmt.Errorf("reading echo of %d bytes: %v", size, err)
		}
		if !bytes.Equal(got, msg) {
			return fmt.Errorf("echo of %d bytes = %q..., want %q...", size, got[:min(size, 32)], msg[:min(size, 32)])
		}
	}
	return nil
}
