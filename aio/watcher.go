package aio

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

const (
	defaultBufferSize = 64 << 10
	defaultSwapChunks = 16
)

// Config configures a Watcher. The zero value gives the defaults.
type Config struct {
	// BufferSize is the size of each chunk of a loop's swap buffer, which
	// nil-buffer reads receive into. Default 64 KiB; values below 4 KiB are
	// raised to 4 KiB.
	BufferSize int
	// SwapChunks is how many chunks each loop's swap buffer may grow to.
	// Default 16. Nil-buffer reads wait for space once every chunk holds
	// data WaitIO has not released, so this bounds the swap memory at
	// Loops × SwapChunks × BufferSize (1 MiB per loop by default). Chunks
	// are allocated only when reads need them. Fewer chunks leave more
	// reads waiting for WaitIO to release space when many connections
	// read at once.
	SwapChunks int
	// Loops is the number of event loops; connections are spread over them
	// in turn. Default runtime.GOMAXPROCS(0): see the package
	// documentation for why.
	Loops int
	// Backend selects the kernel interface. The default, backend.Auto,
	// is epoll on Linux (WaitIO hands every completion to another
	// goroutine: package backend's table) and kqueue on the BSDs and
	// macOS; backend.IOURing asks for io_uring.
	Backend backend.Kind
	// ZeroCopyWrites, on the io_uring backend, sends every write of at
	// least this many bytes on a TCP connection with IORING_OP_SEND_ZC
	// (Linux 6.0): the kernel sends from the caller's buffer instead of
	// copying it. 0, the default, never; epoll and kqueue ignore it, as
	// does a kernel without it. Such a write completes only once the
	// kernel has let go of the buffer (the peer has acknowledged its
	// bytes), and because bytes queued in the socket stay the kernel's
	// until then, a zero-copy write cut short by its deadline, Free,
	// Detach or Close resets the connection. It pays off for large writes through
	// a network device; on loopback the kernel copies anyway.
	ZeroCopyWrites int

	clock loop.Clock  // tests: manual clock
	open  loop.Opener // tests: fault injection
}

// Watcher runs asynchronous reads and writes on delegated connections and
// reports their completions through WaitIO.
//
// A Watcher is a handle: copies share the same watcher. Every method is
// safe from any goroutine (see WaitIO for its single-consumer contract).
// Dropping the last reference to a *Watcher closes it.
type Watcher struct {
	*watcher
}

type watcher struct {
	loops   []*loopState
	next    atomic.Uint32
	reg     registry
	pool    reqPool
	results resultQueue
	die     chan struct{}
	closed  atomic.Bool
	once    sync.Once

	waitMu sync.Mutex // serializes WaitIO; guards the fields below
	held   []*request // the batch the last WaitIO returned
	spare  []*request
	res    []OpResult

	gcFound, gcClosed atomic.Uint32

	errMu sync.Mutex
	err   error // the loop failure that closed the watcher
}

// NewWatcher returns a Watcher with a 64 KiB swap buffer.
func NewWatcher() (*Watcher, error) { return NewWatcherConfig(Config{}) }

// NewWatcherSize returns a Watcher whose swap-buffer chunks are bufsize
// bytes (at least 4 KiB). A negative bufsize is an error.
func NewWatcherSize(bufsize int) (*Watcher, error) {
	if bufsize < 0 {
		return nil, fmt.Errorf("aio: negative buffer size %d", bufsize)
	}
	return NewWatcherConfig(Config{BufferSize: max(bufsize, 1)})
}

// NewWatcherConfig returns a Watcher configured by cfg.
func NewWatcherConfig(cfg Config) (*Watcher, error) {
	w, err := newWatcher(cfg)
	if err != nil {
		return nil, err
	}
	h := &Watcher{w}
	// The loops reference only the inner watcher, so h can become
	// unreachable while they run.
	runtime.AddCleanup(h, func(w *watcher) { w.Close() }, w)
	return h, nil
}

func newWatcher(cfg Config) (*watcher, error) {
	if cfg.BufferSize <= 0 {
		cfg.BufferSize = defaultBufferSize
	}
	cfg.BufferSize = max(cfg.BufferSize, minSwapRead)
	if cfg.SwapChunks <= 0 {
		cfg.SwapChunks = defaultSwapChunks
	}
	if cfg.Loops <= 0 {
		cfg.Loops = runtime.GOMAXPROCS(0)
	}
	w := &watcher{die: make(chan struct{})}
	w.results.ready = make(chan struct{}, 1)
	for range cfg.Loops {
		lp, err := w.newLoop(cfg)
		if err != nil {
			w.Close()
			return nil, err
		}
		w.loops = append(w.loops, lp)
		lp.l.Start()
	}
	return w, nil
}

func (w *watcher) newLoop(cfg Config) (*loopState, error) {
	lp := &loopState{w: w, swap: newSwap(cfg.BufferSize, cfg.SwapChunks)}
	lp.conns = loop.NewSet(func(c *conn) *int32 { return &c.index })
	lp.resume.lp = lp
	l, err := loop.New(loop.Config{Provider: &lp.swap, Clock: cfg.clock, Flush: lp.flush,
		Fault: lp.fault, Backend: cfg.Backend, ZeroCopy: cfg.ZeroCopyWrites, Open: cfg.open})
	if err != nil {
		return nil, err
	}
	lp.l = l
	return lp, nil
}

// Close stops the watcher: its loops release every connection, closing
// the descriptors, and WaitIO returns ErrWatcherClosed. Pending requests
// are dropped. Close waits for the loops to exit; it is idempotent and
// always returns nil.
func (w *watcher) Close() error {
	w.stop(nil)
	return nil
}

// stop closes the watcher once. With a nil cause (Close) pending requests
// are dropped, as gaio does. With a cause (a loop failed, see
// loopState.fault) every pending request completes with it: WaitIO
// returns those completions, then ErrWatcherClosed, and Err the cause.
func (w *watcher) stop(cause error) {
	w.once.Do(func() {
		w.closed.Store(true)
		if cause == nil {
			w.results.close()
			close(w.die)
		} else {
			w.errMu.Lock()
			w.err = cause
			w.errMu.Unlock()
		}
		for _, lp := range w.loops {
			lp.l.Stop(func(l *loop.Loop) { lp.stop(l, cause) })
		}
		w.sweep()
		if cause != nil {
			// Every loop has exited and closed its backend: the buffers of
			// the operations that were in flight are the callers' again.
			for _, lp := range w.loops {
				w.results.push(lp.stranded)
				lp.stranded = nil
			}
			w.results.closeDrained()
			close(w.die)
		}
	})
}

// Err returns the error that closed the watcher when one of its event
// loops failed (its backend returned an error it cannot go on from), and
// nil otherwise: nil while it runs and after Close.
func (w *watcher) Err() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.err
}

// GetGC reports how many delegated connections were found unreachable by
// the garbage collector, and how many of those the loops have released.
func (w *watcher) GetGC() (found uint32, closed uint32) {
	return w.gcFound.Load(), w.gcClosed.Load()
}

// SetLoopAffinity pins the loops' threads to CPUs: loop i to cpuid+i,
// modulo the number of CPUs. It returns once every loop has applied it.
// Where the OS cannot pin threads (macOS), the loops are only locked to
// their threads. After Close it returns ErrConnClosed, as gaio does.
func (w *watcher) SetLoopAffinity(cpuid int) error {
	return w.setAffinity(cpuid, ErrConnClosed)
}

// SetPollerAffinity is SetLoopAffinity: a gale loop polls and performs
// I/O on one goroutine. After Close it returns ErrPollerClosed.
func (w *watcher) SetPollerAffinity(cpuid int) error {
	return w.setAffinity(cpuid, ErrPollerClosed)
}

func (w *watcher) setAffinity(cpuid int, closedErr error) error {
	n := runtime.NumCPU()
	if cpuid < 0 || cpuid >= n {
		return ErrCPUID
	}
	if w.closed.Load() {
		return closedErr
	}
	errs := make(chan error, len(w.loops))
	for i, lp := range w.loops {
		cpu := (cpuid + i) % n
		if lp.l.Post(loop.Func(func(*loop.Loop) { errs <- sock.SetAffinity(cpu) })) != nil {
			return closedErr
		}
	}
	var err error
	for range w.loops {
		select {
		case e := <-errs:
			err = errors.Join(err, e)
		case <-w.die:
			return closedErr
		}
	}
	return err
}
