package netconn_test

import (
	"bufio"
	"fmt"
	"log"
	"net"

	"github.com/galeio/gale/netconn"
)

// A line echo server in the style of package net, on gale's loops.
func Example() {
	ln, err := netconn.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // the listener closed
			}
			go func(c net.Conn) {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte("echo: " + line))
				}
			}(c)
		}
	}()

	c, err := netconn.Dial("tcp", ln.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "hello\n")
	reply, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(reply)
	// Output: echo: hello
}

// A UDP round trip with ListenPacket and a dialed datagram conn.
func ExampleListenPacket() {
	pc, err := netconn.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer pc.Close()
	c, err := netconn.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("ping"))
	buf := make([]byte, 64)
	n, from, err := pc.ReadFrom(buf)
	if err != nil {
		log.Fatal(err)
	}
	pc.WriteTo([]byte("pong"), from)
	n, err = c.Read(buf)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(buf[:n]))
	// Output: pong
}
