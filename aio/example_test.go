package aio_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"time"

	"github.com/galeio/gale/aio"
)

// An echo server: one goroutine accepts a connection and hands it to the
// watcher, then echoes what it reads until the client hangs up. The client
// is plain package net.
func ExampleWatcher() {
	w, err := aio.NewWatcher()
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()

	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			log.Print(err)
			return
		}
		// The first request delegates conn to the watcher.
		w.Read(nil, conn, make([]byte, 64))
		for {
			results, err := w.WaitIO()
			if err != nil {
				return
			}
			for _, res := range results {
				if res.Error != nil {
					fmt.Println("server:", res.Error)
					w.Free(res.Conn)
					return
				}
				switch res.Operation {
				case aio.OpRead: // echo what arrived
					w.Write(nil, res.Conn, res.Buffer[:res.Size])
				case aio.OpWrite: // echoed: read again into the whole buffer
					w.Read(nil, res.Conn, res.Buffer[:cap(res.Buffer)])
				}
			}
		}
	}()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	msg := "hello, gale"
	if _, err := c.Write([]byte(msg)); err != nil {
		log.Fatal(err)
	}
	echo := make([]byte, len(msg))
	if _, err := io.ReadFull(c, echo); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("client: %s\n", echo)
	c.Close()
	<-done
	// Output:
	// client: hello, gale
	// server: EOF
}

// ReadFull completes only once its buffer is full, however the bytes
// arrive, or with what it got when the stream ends first.
func ExampleWatcher_ReadFull() {
	w, err := aio.NewWatcher()
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	client, server := bxLoopback()
	defer w.Free(server)

	// Reads on one connection complete in the order submitted.
	w.ReadFull("header", server, make([]byte, 8), time.Time{})
	w.ReadFull("body", server, make([]byte, 16), time.Time{})
	for _, part := range []string{"GA", "LE", "0001", "abc"} {
		client.Write([]byte(part))
	}
	client.Close()

	for n := 0; n < 2; {
		results, err := w.WaitIO()
		if err != nil {
			log.Fatal(err)
		}
		for _, res := range results {
			fmt.Printf("%s: %q, %v\n", res.Context, res.Buffer[:res.Size], res.Error)
			n++
		}
	}
	// Output:
	// header: "GALE0001", <nil>
	// body: "abc", EOF
}

// Free closes a delegated connection at once: its pending requests
// complete with ErrConnClosed, and the peer sees the connection end.
func ExampleWatcher_Free() {
	w, err := aio.NewWatcher()
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	client, server := bxLoopback()
	defer client.Close()

	w.Read("pending read", server, make([]byte, 16))
	w.Free(server)

	results, err := w.WaitIO()
	if err != nil {
		log.Fatal(err)
	}
	res := results[0]
	fmt.Printf("%s: %v (net.ErrClosed: %v)\n", res.Context, res.Error, errors.Is(res.Error, net.ErrClosed))

	_, err = client.Read(make([]byte, 1))
	fmt.Println("client:", err)
	// Output:
	// pending read: connection closed (net.ErrClosed: true)
	// client: EOF
}

// Detach takes a connection back from the watcher as an ordinary
// net.Conn, for instance to hand it to code that does blocking I/O.
func ExampleWatcher_Detach() {
	w, err := aio.NewWatcher()
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	client, server := bxLoopback()
	defer client.Close()

	// Delegation closes the caller's conn: it no longer reads.
	w.Read("pending read", server, make([]byte, 16))
	_, err = server.Read(make([]byte, 1))
	fmt.Println("delegated conn closed:", errors.Is(err, net.ErrClosed))

	nc, err := w.Detach(server)
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	results, err := w.WaitIO()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %v\n", results[0].Context, results[0].Error)

	client.Write([]byte("ping"))
	buf := make([]byte, 4)
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(nc, buf); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("detached conn read %q\n", buf)
	// Output:
	// delegated conn closed: true
	// pending read: connection closed
	// detached conn read "ping"
}

// A watcher with two loops and a smaller swap buffer. A read with a nil
// buffer receives into the swap buffer; the bytes stay valid until the
// next WaitIO call.
func ExampleNewWatcherConfig() {
	w, err := aio.NewWatcherConfig(aio.Config{
		BufferSize: 16 << 10, // each swap chunk
		SwapChunks: 2,        // chunks per loop, at most
		Loops:      2,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	fmt.Println("loops:", len(w.Stats().Loops))

	client, server := bxLoopback()
	defer client.Close()
	defer w.Free(server)
	client.Write([]byte("swap"))
	w.Read(nil, server, nil)

	results, err := w.WaitIO()
	if err != nil {
		log.Fatal(err)
	}
	res := results[0]
	fmt.Printf("read %q from the swap buffer: %v\n", res.Buffer, res.IsSwapBuffer)
	fmt.Println("swap memory:", w.Stats().Total().SwapBytes)
	// Output:
	// loops: 2
	// read "swap" from the swap buffer: true
	// swap memory: 16384
}

// bxLoopback returns both ends of a TCP connection over 127.0.0.1.
func bxLoopback() (client, server net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		log.Fatal(err)
	}
	client.SetDeadline(time.Now().Add(10 * time.Second))
	return client, server
}

// CloseWrite passes a half-close on, as a proxy does when one side has
// finished sending: after the writes submitted before it, the peer reads
// end of file, and the connection can still read.
func ExampleWatcher_CloseWrite() {
	w, err := aio.NewWatcher()
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	client, server := bxLoopback()
	defer client.Close()

	w.Write("reply", server, []byte("last words"))
	w.CloseWrite(server) // after the write
	w.Read("read", server, make([]byte, 16))
	b, _ := io.ReadAll(client) // until end of file
	fmt.Printf("client read %q, then end of file\n", b)
	client.Write([]byte("ack"))
	for n := 0; n < 2; {
		results, err := w.WaitIO()
		if err != nil {
			log.Fatal(err)
		}
		for _, r := range results {
			fmt.Printf("%s: %d bytes, %v\n", r.Context, r.Size, r.Error)
			n++
		}
	}
	// Output:
	// client read "last words", then end of file
	// reply: 10 bytes, <nil>
	// read: 3 bytes, <nil>
}
