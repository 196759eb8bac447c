// Package benchrun is galebench's machinery: it starts echo servers in
// child processes, drives each with one load generator that verifies every
// echoed byte, and reports medians of interleaved repetitions as a table,
// JSON lines, a Markdown report and SVG charts.
//
// cmd/galebench runs it with gale's servers and std net's; the bench
// module (a separate Go module, so that the core keeps its single
// dependency) adds the peers'. Both are one call: Main(cfg).
//
// Each server runs in a child process (the same binary, re-executed with
// -serve NAME), so its CPU time and memory are the server's alone, read
// from /proc. The load generator is a goroutine per connection over
// package net.
//
// The TLS scenarios (tls-stream, tls-pingpong, tls-handshake, tls-idle)
// run against the TLS servers (Server.ServeTLS) alone, which run nothing
// else. Every TLS server uses the same ECDSA P-256 certificate, from
// internal/testkit/tlstest, written to a temporary directory the children read;
// the clients are crypto/tls's with its default settings, trusting that
// certificate's authority and keeping no sessions to resume.
//
// The HTTP scenarios (http-hello, http-64k, http-upload, http-idle) run
// against the HTTP/1.1 servers (Server.ServeHTTP) alone, in the same way.
// Their load generator is wrk, a process of its own whose output is
// parsed and whose CPU time is the client's; http-idle's is this
// process, as idle's is. Each server's answers are checked once with
// net/http's client before it is measured (checkHTTP).
//
// The HTTP/2 scenarios (h2-hello, h2-idle) run against the HTTP/2
// servers (Server.ServeH2) alone, over h2c by prior knowledge. h2-hello's
// load generator is h2load (nghttp2's), driven as wrk is; h2-idle's is
// this process, speaking the frames itself. Each server's answer is
// checked with net/http's HTTP/2 client first (checkH2).
package benchrun

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
)

// Server is an echo server the suite can start.
type Server struct {
	Name string
	// Serve echoes on ln, or on ln's address after closing ln, calls ready
	// with the address it accepts on once connections may be dialed, and
	// returns only on failure. It runs in the child process.
	Serve func(ln net.Listener, ready func(net.Addr)) error
	// ServeTLS, set in place of Serve, makes a TLS server: it echoes as
	// Serve does, but over TLS with the key pair kp, the same for every
	// server. A TLS server runs the tls- scenarios alone, which no plain
	// server runs.
	ServeTLS func(ln net.Listener, kp KeyPair, ready func(net.Addr)) error
	// ServeHTTP, set in place of Serve, makes an HTTP/1.1 server: it
	// serves HTTPHandler's paths (or the same answers, for a server that
	// takes no http.Handler) on ln as Serve does, calls ready the same
	// way, and returns only on failure. An HTTP server runs the http-
	// scenarios alone, which no other server runs.
	ServeHTTP func(ln net.Listener, ready func(net.Addr)) error
	// ServeH2, set in place of Serve, makes an HTTP/2 server: it serves
	// HTTPHandler as ServeHTTP does, and HTTP/2 in the clear to a client
	// that opens with the connection preface (h2c by prior knowledge,
	// RFC 9113 §3.3). An HTTP/2 server runs the h2- scenarios alone.
	ServeH2 func(ln net.Listener, ready func(net.Addr)) error
	// Gale marks gale's own servers: the profiling flags apply to them.
	Gale bool
	// Backend is the gale backend the server runs on, "epoll" or
	// "io_uring"; empty for the others.
	Backend string
	// Note is one line on how the server is written, for the report.
	Note string
}

// TLS reports whether s is a TLS server.
func (s Server) TLS() bool { return s.ServeTLS != nil }

// Config is what a command adds to the suite.
type Config struct {
	Command string   // the command's name in messages, such as "galebench"
	Servers []Server // every server the command can start
	// Default lists the servers to compare when -servers is not given;
	// DefaultTLS those added when a TLS scenario is chosen, DefaultHTTP
	// those added when an HTTP one is, DefaultH2 when an HTTP/2 one is.
	Default, DefaultTLS, DefaultHTTP, DefaultH2 []string
	// Full makes the full suite the default (else the short one).
	Full bool
	// Usage is printed before the flags by -h.
	Usage string
}

// Main runs the command: as a server child when given -serve, else the
// suite the flags choose. It exits the process.
func Main(cfg Config) {
	fs := flag.NewFlagSet(cfg.Command, flag.ExitOnError)
	serve := fs.String("serve", "", "run as a server child (internal)")
	pin := fs.Int("pin-cpu", -1, "pin this process to one CPU (internal, for -serve)")
	prof := fs.String("cpuprofile", "", "write each gale server's CPU profile to FILE, with server and case in its name")
	mprof := fs.String("memprofile", "", "write each gale server's heap profile to FILE, with server and case in its name")
	var tlsFiles keyFiles
	fs.StringVar(&tlsFiles.cert, "tls-cert", "", "a TLS server's certificate, PEM (internal, for -serve)")
	fs.StringVar(&tlsFiles.key, "tls-key", "", "a TLS server's private key, PEM (internal, for -serve)")
	c := bindFlags(fs, cfg)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), cfg.Usage)
		fs.PrintDefaults()
	}
	fs.Parse(os.Args[1:])
	if *serve != "" {
		if err := runChild(cfg.Servers, *serve, childOptions{cpu: *pin, cpuProfile: *prof, memProfile: *mprof, tls: tlsFiles}); err != nil {
			fmt.Fprintf(os.Stderr, "%s server: %v\n", cfg.Command, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	o := &c.o
	o.CPUProfile, o.MemProfile = *prof, *mprof
	o.Progress = os.Stderr
	o.Command = strings.Join(append([]string{cfg.Command}, os.Args[1:]...), " ")
	err := func() error {
		if c.report {
			return Rerender(o.Out)
		}
		if err := c.finish(fs); err != nil {
			return err
		}
		return Run(cfg.Servers, *o)
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", cfg.Command, err)
		os.Exit(1)
	}
}

// find returns the server called name.
func find(servers []Server, name string) (Server, error) {
	for _, s := range servers {
		if s.Name == name {
			return s, nil
		}
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return Server{}, fmt.Errorf("unknown server %q (have %s)", name, strings.Join(names, ", "))
}

var errNoCases = errors.New("no scenario chosen")
