package poller

import (
	"sync"
	"time"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/windows"
)

// iocpDrainLimit bounds how long Close waits for the packets of the
// operations it cancelled.
const iocpDrainLimit = 5 * time.Second

// Close cancels every operation in flight and waits, up to
// iocpDrainLimit, for their packets, whose accepted sockets it closes;
// then it closes the port and frees the slab. The sockets still added
// stay open. If the kernel has not let go of every entry by then, the
// slab and the buffers its entries hold are kept for good: the kernel
// may still write to them.
func (b *iocpBackend) Close() error {
	if b.port == 0 {
		return nil
	}
	if b.nb != nil {
		b.nb.Close()
	}
	for i := range b.ents {
		e := &b.ents[i]
		e.live = false
		if e.rop != 0 || e.sop != 0 {
			sock.CancelIoEx(e.fd, 0)
		}
	}
	b.slots = nil
	b.drain()
	windows.CloseHandle(b.port)
	b.port = 0
	if b.inflight == 0 {
		b.slab.release()
	} else {
		iocpStuck.Lock()
		iocpStuck.ents = append(iocpStuck.ents, b.ents)
		iocpStuck.Unlock()
	}
	b.ents = nil
	return nil
}

// drain takes packets, as orphans', until none is due or
// iocpDrainLimit passes.
func (b *iocpBackend) drain() {
	deadline := time.Now().Add(iocpDrainLimit)
	for b.inflight > 0 && time.Now().Before(deadline) {
		ready := b.ready
		b.ready = nil
		for i := range ready {
			b.complete(&ready[i], nil)
		}
		n, err := getQueuedEx(b.port, b.evs, 50)
		if err != nil {
			return
		}
		for i := range b.evs[:n] {
			b.complete(&b.evs[i], nil)
		}
	}
}

// iocpStuck keeps what closed backends' kernels did not let go of.
var iocpStuck struct {
	sync.Mutex
	ents [][]iocpEnt
}
