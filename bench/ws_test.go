package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// init lets the test binary serve as ws-bench's children (ws-server,
// ws-load), which it starts by running os.Executable with the subcommand.
func init() {
	if len(os.Args) > 1 && (os.Args[1] == "ws-server" || os.Args[1] == "ws-load") {
		subcommand(wsCommands, os.Args[1:])
		os.Exit(0)
	}
}

// TestWsBenchSmoke runs ws-bench's echo briefly on every server with each
// client: 20 connections, each echo checked byte for byte.
func TestWsBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 10 server and 10 client processes")
	}
	for _, client := range []string{"gale", "gorilla"} {
		t.Run(client, func(t *testing.T) {
			dir := t.TempDir()
			err := wsBenchMain([]string{"-mode", "echo", "-client", client, "-n", "20", "-c", "5", "-d", "200ms", "-reps", "1",
				"-settle", "50ms", "-max-busy", "1", "-server-cpu", "", "-client-cpu", "", "-out", dir,
				"-libs", strings.Join(wsNames(), ",")})
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(dir, "ws-echo.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			seen := map[string]bool{}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				var r wsRun
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				seen[r.Lib] = true
				if r.Err != "" || r.Conns != 20 || r.Msgs <= 0 || r.Bad != 0 || r.Lost != 0 || r.FirstError != "" {
					t.Errorf("%s: %s", r.Lib, wsRunLine(r))
				}
			}
			for _, s := range wsServers {
				if !seen[s.name] {
					t.Errorf("no run of %s", s.name)
				}
			}
		})
	}
}

// TestWsScaleSmoke runs ws-scale briefly the way the million is run: each
// client from its own source address, keep-alive off. The servers hold
// every connection the clients made when their memory is read.
func TestWsScaleSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 2 server and 2 client processes")
	}
	for _, client := range []string{"gale", "gorilla"} {
		t.Run(client, func(t *testing.T) {
			dir := t.TempDir()
			err := wsScaleMain([]string{"-lib", "gale", "-client", client, "-layout", "ports", "-conns", "400", "-procs", "2", "-clients", "2",
				"-client-srcs", "-keepalive", "-1s", "-hold", "100ms", "-wait", "0s", "-server-cpu", "", "-client-cpu", "", "-out", dir})
			if err != nil {
				t.Fatal(err)
			}
			r := readScaleRecord(t, dir)
			if r.Err != "" || r.Conns != 400 || r.Held != 400 || !r.Srcs || r.KeepAlive != "-1s" || r.Loaded.Pss <= 0 {
				t.Errorf("%s", wsScaleLine(r))
			}
		})
	}
}

// TestWsScaleLeanIdle runs ws-scale's servers from their one-library
// binaries (-lean, built by the go command) and reads their memory a
// second time after an idle wait (-idle).
func TestWsScaleLeanIdle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries and starts 2 server and 2 client processes")
	}
	for _, lib := range []string{"gale", "nbio"} {
		t.Run(lib, func(t *testing.T) {
			dir := t.TempDir()
			err := wsScaleMain([]string{"-lib", lib, "-lean", "-idle", "200ms", "-conns", "400", "-procs", "2", "-clients", "2",
				"-client-srcs", "-keepalive", "-1s", "-hold", "100ms", "-wait", "0s", "-server-cpu", "", "-client-cpu", "", "-out", dir})
			if err != nil {
				t.Fatal(err)
			}
			r := readScaleRecord(t, dir)
			if r.Err != "" || !r.Lean || r.Held != 400 || r.Idle == nil || r.Idle.Held != 400 || r.Idle.Mem.Pss <= 0 || r.Idle.MemStats["heap_inuse"] <= 0 {
				t.Errorf("%s", wsScaleLine(r))
			}
		})
	}
}

// readScaleRecord reads the one record a ws-scale run wrote to dir.
func readScaleRecord(t *testing.T, dir string) wsScaleRun {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "ws-scale.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var r wsScaleRun
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}
