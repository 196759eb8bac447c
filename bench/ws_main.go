package main

// The WebSocket benchmarks (docs/bench/ws/README.md): echo servers of
// gale, gorilla/websocket, lxzan/gws, nbio (nbhttp/websocket) and
// coder/websocket, one common load generator, and the commands that run
// them side by side. They are subcommands of this binary, apart from
// galebench's suite:
//
//	go run . ws-server -lib gale -addr 127.0.0.1:9001 [-reuseport]
//	go run . ws-load -url ws://127.0.0.1:9001/ws -n 10000 ...   (a client process)
//	go run . ws-bench -mode idle|echo [-libs ...] [-reps 3] -out ../docs/bench/ws
//	go run . ws-scale -lib gale -conns 100000 -procs 6 -out ../docs/bench/ws
//	go run . ws-scale -lib gale -conns 1000000 -procs 60 -clients 60 -client-srcs -keepalive -1s [-lean] [-idle 5m]
//
// ws-server is also a binary of its own per library, cmd/ws-server-gale and
// cmd/ws-server-nbio (internal/wsserve is the protocol both sides share):
// ws-scale -lean runs those, so that a server process's own memory is the
// library's rather than this binary's, which links every peer.

import (
	"fmt"
	"os"
)

// wsCommands are the WebSocket subcommands, by name.
var wsCommands = map[string]func(args []string) error{
	"ws-server": wsServerMain,
	"ws-load":   wsLoadMain,
	"ws-bench":  wsBenchMain,
	"ws-scale":  wsScaleMain,
}

// subcommand runs the subcommand args[0] of cmds with the rest of args,
// and reports whether args named one; it exits the process when the
// subcommand fails.
func subcommand(cmds map[string]func(args []string) error, args []string) bool {
	if len(args) == 0 {
		return false
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		return false
	}
	if err := cmd(args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "bench %s: %v\n", args[0], err)
		os.Exit(1)
	}
	return true
}
