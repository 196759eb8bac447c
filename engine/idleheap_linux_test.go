//go:build !race

package engine_test

import (
	"net"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// idleHeapMax bounds the live heap an idle connection holds: its 112-byte
// Conn, its slot in the loop (24 bytes) and the backend's record (24 on
// epoll and io_uring), with room for the tables' pages.
const idleHeapMax = 176

// TestIdleConnHeap measures the Go heap an idle connection keeps, after
// it echoed a byte (so the server made all it keeps per connection):
// 2,000 connections, with a client made of raw system calls so that only
// the server allocates. It is the live part of galebench's idle figure,
// which adds the collector's headroom.
func TestIdleConnHeap(t *testing.T) { backendtest.Run(t, testIdleConnHeap) }

func testIdleConnHeap(t *testing.T) {
	backendtest.SkipOnNet(t, "package net's descriptors and a worker per receive")
	addr, stop := ebStartEngine(t)
	t.Cleanup(stop)
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	clients := stresstest.NewBacklog(t, n) // of system calls: the client keeps no heap
	buf := []byte{7}
	dial := func(i int) {
		clients.Connect(t, i, a)
		if _, err := unix.Write(clients.FD(i), buf); err != nil {
			t.Fatal(err)
		}
		if _, err := unix.Read(clients.FD(i), buf); err != nil {
			t.Fatal(err)
		}
	}
	dial(0)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for i := 1; i < n; i++ {
		dial(i)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	k := float64(n - 1)
	live := float64(m1.HeapAlloc-m0.HeapAlloc) / k
	t.Logf("per idle connection: %.0f B live, %.0f B allocated in %.2f allocations", live, float64(m1.TotalAlloc-m0.TotalAlloc)/k, float64(m1.Mallocs-m0.Mallocs)/k)
	if live > idleHeapMax {
		t.Errorf("an idle connection keeps %.0f B of heap, want at most %d", live, idleHeapMax)
	}
}
