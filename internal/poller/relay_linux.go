package poller

import (
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// relay is the epoll notifier of an owner that hands its completions to
// other goroutines (HandOff: aio, netconn). A goroutine of its own, the waiter,
// blocks in epoll_wait(2) and relays what it collects to the loop, which
// parks on a channel, not in the kernel and not on the runtime poller.
//
// Why: the loop and the goroutine that consumes its results pass work back
// and forth many times a second, and the Go scheduler offers every
// goroutine made runnable to an idle processor, waking a thread that finds
// nothing to do and sleeps again (futex calls and context switches on
// each hand-off). A waiter blocked in a system call keeps its processor
// out of the idle list, so the hand-offs stay on one thread, with no
// wake-up; and the loop, which never polls the kernel itself, makes no
// epoll_wait per iteration either.
type relay struct {
	ep *epoll // the descriptors; its wakefd only breaks the waiter's wait at close

	mu     sync.Mutex
	queue  []unix.EpollEvent // collected by the waiter, not yet taken
	err    error             // the waiter's epoll_wait error, ending it
	parked bool              // the loop waits on ready for the queue
	held   bool              // the waiter waits on ack for the loop to take it

	ready chan struct{} // capacity 1: queue not empty, or a wake-up
	ack   chan struct{} // capacity 1: the loop took a batch; wait again
	quit  chan struct{} // closed by close
	done  chan struct{} // closed when the waiter returned
	timer *time.Timer
	taken []unix.EpollEvent // the loop's side of the queue
}

// relays reports whether a HandOff owner's loops wait through a relay: not
// with a single processor (GOMAXPROCS=1), which the waiter, blocked in the
// kernel, would hold while the loop and its consumers wait for the
// scheduler to take it back (20 µs to 10 ms): measured there, the stream
// lost 15-20 % and the ping-pong's 99.9th percentile went from 5 to 20 ms.
func relays() bool { return runtime.GOMAXPROCS(0) > 1 }

func newRelay() (*relay, error) {
	ep, err := newEpoll(false)
	if err != nil {
		return nil, err
	}
	r := &relay{
		ep:    ep,
		ready: make(chan struct{}, 1),
		ack:   make(chan struct{}, 1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go r.waiter()
	return r, nil
}

func (r *relay) add(fd int, tag Tag) error { return r.ep.add(fd, tag) }
func (r *relay) del(fd int) error          { return r.ep.del(fd) }

// waiter is the relay's goroutine: it waits in the kernel, hands the
// batch over, and waits for the loop to take it.
func (r *relay) waiter() {
	defer close(r.done)
	buf := make([]unix.EpollEvent, 128)
	for {
		n, err := unix.EpollWait(r.ep.epfd, buf, -1)
		select {
		case <-r.quit:
			return
		default:
		}
		if err == unix.EINTR {
			continue
		}
		r.mu.Lock()
		if err != nil {
			r.err = os.NewSyscallError("epoll_wait", err)
		} else {
			r.queue = append(r.queue, buf[:n]...)
		}
		// Wait until the loop took the batch before waiting in the kernel
		// again: a parked loop is readied onto this goroutine's processor
		// and would sit there while this goroutine blocks; and what comes
		// in meanwhile makes the next batch (a busy loop takes the queue at
		// its next iteration).
		wasParked := r.parked
		r.parked = false
		r.held = err == nil
		r.mu.Unlock()
		if err != nil {
			r.signal()
			return
		}
		if n == len(buf) && n < 4096 {
			buf = make([]unix.EpollEvent, 2*n)
		}
		if wasParked {
			r.signal()
		}
		select {
		case <-r.ack:
		case <-r.quit:
			return
		}
	}
}

func (r *relay) signal() {
	select {
	case r.ready <- struct{}{}:
	default:
	}
}

// wait takes what the waiter collected, parking first for up to msec
// milliseconds (for ever if negative) if there is nothing.
func (r *relay) wait(msec int, evs []event) ([]event, error) {
	if msec != 0 && r.parkable() {
		r.park(msec)
	}
	r.mu.Lock()
	r.taken, r.queue = r.queue, r.taken[:0]
	err, held := r.err, r.held
	r.parked, r.held = false, false
	r.mu.Unlock()
	if held {
		r.ack <- struct{}{} // cannot block: the waiter takes each ack it holds for
	}
	if err != nil {
		return evs, err
	}
	return appendEvents(evs, r.taken), nil
}

// parkable marks the loop parked unless the waiter has something for it.
func (r *relay) parkable() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parked = len(r.queue) == 0 && r.err == nil
	return r.parked
}

func (r *relay) park(msec int) {
	if msec < 0 {
		<-r.ready
		return
	}
	d := time.Duration(msec) * time.Millisecond
	if r.timer == nil {
		r.timer = time.NewTimer(d)
	} else {
		r.timer.Reset(d)
	}
	select {
	case <-r.ready:
		r.timer.Stop()
	case <-r.timer.C:
	}
}

func (r *relay) wake() error {
	r.signal()
	return nil
}

func (r *relay) close() error {
	close(r.quit)
	r.ep.wake() // break the waiter's epoll_wait
	<-r.done
	return r.ep.close()
}
