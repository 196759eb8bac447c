package aio_test

import (
	"testing"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestAutoBackend checks package backend's table for aio: WaitIO hands
// every completion to another goroutine, so Auto opens epoll on Linux.
func TestAutoBackend(t *testing.T) {
	want := backendtest.Auto(t, false)
	w, err := aio.NewWatcherConfig(aio.Config{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := w.Stats().Loops[0].Backend; got != want {
		t.Fatalf("Auto opened %v for aio; package backend's table says %v", got, want)
	}
}
