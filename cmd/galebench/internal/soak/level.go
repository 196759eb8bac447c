package soak

import (
	"os"
	"runtime"
	"sync"

	"github.com/galeio/gale/internal/tools/benchrun"
	"github.com/galeio/gale/internal/tools/procfs"
)

// Level is what a process holds at one moment.
type Level struct {
	FDs        int   `json:"fds"`        // open descriptors
	Goroutines int   `json:"goroutines"` // runtime.NumGoroutine
	RSS        int64 `json:"rss"`        // resident memory, bytes
}

// proc is a process the soak watches: a server child or the client.
type proc struct {
	name string
	gale bool
	// read returns the process's level and descriptors now.
	read func() (Level, map[int]string, error)
	// conns returns the client connections open to it (to every server,
	// for the client).
	conns func() int64
}

// serverProc watches a server child. The child answers one command at a
// time, so reads are serialized.
func serverProc(s benchrun.Server, ch *benchrun.Child, t *tally) *proc {
	var mu sync.Mutex
	return &proc{
		name: s.Name, gale: s.Gale, conns: t.open.Load,
		read: func() (Level, map[int]string, error) {
			mu.Lock()
			g, err := ch.Goroutines()
			mu.Unlock()
			if err != nil {
				return Level{}, nil, err
			}
			return pidLevel(ch.PID(), g)
		},
	}
}

// clientProc watches this process, the load generator.
func clientProc(targets []target) *proc {
	return &proc{
		name: "client",
		read: func() (Level, map[int]string, error) { return pidLevel(os.Getpid(), runtime.NumGoroutine()) },
		conns: func() int64 {
			var n int64
			for _, tg := range targets {
				n += tg.t.open.Load()
			}
			return n
		},
	}
}

// pidLevel reads process pid's descriptors and memory from /proc.
func pidLevel(pid, goroutines int) (Level, map[int]string, error) {
	fds, err := procfs.FDs(pid)
	if err != nil {
		return Level{}, nil, err
	}
	rss, err := procfs.RSS(pid)
	return Level{FDs: len(fds), Goroutines: goroutines, RSS: rss}, fds, err
}
