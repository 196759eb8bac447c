package stresstest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/faulttest"
)

// stormBytes is what each client of StormConn streams while its storm
// lasts: small enough for the socket buffers to hold it all, so that no
// client blocks on a server that waits for readiness.
const stormBytes = 48 << 10

// StormTransient checks that a storm of a transient errno (EINTR,
// EAGAIN), which the caller started (faulttest.Start), is invisible to
// the clients of the echo server at addr. Four clients each send 100
// messages of 1 to 2 KiB, each after the echo of the one before, so that
// the storm meets every path. With immediate (the server retries the
// errno at once: EINTR, or anything io_uring completes an operation with)
// every echo must come back within 10 s. Otherwise a client waits 20 ms
// for it and sends its next message anyway: on epoll an injected EAGAIN
// holds a socket until the next edge, which the next message brings. Then
// it stops the storm, dials one client more (whose accept brings the last
// edge of a listener) and sends 1 KiB on every client, all of which must
// be echoed in full, in order. A storm that injected nothing fails t.
//
// It returns the clients, for the caller's checks of what its API saw:
// every connection served, none failed nor closed. The caller starts the
// storm before its server listens if the accepts are to be hit (an
// io_uring multishot accept armed before would escape it). For the
// test's goroutine; one storm at a time per process: not for parallel
// tests.
func StormTransient(t *testing.T, addr net.Addr, storm *faulttest.Injector, immediate bool) []*faulttest.Echo {
	t.Helper()
	cs := EchoClients(t, addr, 4, 1)
	if err := stormRounds(cs, 100, immediate); err != nil {
		t.Error(err)
	}
	storm.Stop()
	cs = append(cs, EchoClients(t, addr, 1, 100)...)
	EchoRound(t, cs, "after the storm")
	if storm.Hits() == 0 {
		t.Fatalf("no failure injected in %d calls", storm.Calls())
	}
	t.Logf("%d of %d calls failed", storm.Hits(), storm.Calls())
	return cs
}

// stormRounds makes every client, each on its own goroutine, send rounds
// messages of 1 to 2 KiB, each after the echo of the one before. With
// immediate, every echo must come back (within faultsWait); otherwise a
// client waits 20 ms for it and goes on, its next message bringing the
// edge a held socket waits for.
func stormRounds(cs []*faulttest.Echo, rounds int, immediate bool) error {
	wait := 20 * time.Millisecond
	if immediate {
		wait = faultsWait
	}
	errs := make(chan error, len(cs))
	for i, c := range cs {
		go func() {
			for r := range rounds {
				if err := c.Send(1<<10+(r*331)%(1<<10), faultsWait); err != nil {
					errs <- fmt.Errorf("client %d, round %d: Send = %v", i, r, err)
					return
				}
				if !c.Wait(wait) && immediate {
					errs <- fmt.Errorf("client %d, round %d: %d of %d bytes echoed (reader: %v), want all: the errno is retried at once", i, r, c.Got(), c.Sent(), c.Err())
					return
				}
			}
			errs <- nil
		}()
	}
	var err error
	for range cs {
		err = errors.Join(err, <-errs)
	}
	return err
}

// Retry is what a server may make of StormConn's errno.
type Retry int

const (
	// NoRetry: the errno ends the connection.
	NoRetry Retry = iota
	// MayRetry: the server ends the connection, or retries the call and
	// the connection goes on (io_uring's ENOBUFS, when it ended a receive
	// from the buffer ring, which may or may not be the call that failed).
	MayRetry
	// MustRetry: the server retries the call and the connection goes on.
	MustRetry
)

// StormConn checks that a resource errno (ENOMEM, ENOBUFS) from one
// connection's calls of op (faulttest.Read or Write) touches that
// connection alone, on the echo server at addr. It dials three clients
// (seeds 10 to 12), sends 1 KiB on each and waits for its echo, so that
// the server holds them all; then, from the first call on, every first or
// second call of op on the first client's connection, the target, fails
// with errno while every client sends 48 KiB. The target's peer must read
// an exact prefix of its echo and then the end (EOF or a reset), unless
// the server retried: with MustRetry every byte must come back, with
// MayRetry either. The others must echo every byte; the storm must hit.
//
// It returns the clients, target first, and whether the server retried,
// for the caller's checks of what its API reported: the target's error
// (CheckOpError) unless retried, and no other. For the test's goroutine;
// one storm at a time per process: not for parallel tests.
func StormConn(t *testing.T, addr net.Addr, op faulttest.Op, errno syscall.Errno, retry Retry) (cs []*faulttest.Echo, retried bool) {
	t.Helper()
	cs = EchoClients(t, addr, 3, 10)
	SendAll(cs, 1<<10) // all served and echoing
	for _, c := range cs {
		c.Wait(faultsWait)
	}
	// From the first call on, every other one: the whole stream may take
	// a single read and a single write.
	storm := faulttest.Start(t, faulttest.Storm{Errno: errno, Ops: []faulttest.Op{op}, MinGap: 1, MaxGap: 2,
		Peers: []net.Addr{cs[0].Conn().LocalAddr()}})
	SendAll(cs, stormBytes) // the target's writes may fail: it is reset
	target := cs[0]
	switch retry {
	case MustRetry:
		retried = true
		if !target.Wait(faultsWait) {
			t.Fatalf("target: %d of %d bytes echoed (reader: %v), want all: the server retries %v", target.Got(), target.Sent(), target.Err(), errno)
		}
	case MayRetry:
		retried = target.Wait(faultsWait)
	}
	if !retried {
		if err := target.Ended(faultsWait); err == nil || errors.Is(err, faulttest.ErrMismatch) {
			t.Errorf("target's peer: %v after %d of %d bytes, want the end of an exact prefix of its echo (%d of %d calls failed)", err, target.Got(), target.Sent(), storm.Hits(), storm.Calls())
		}
	}
	for i, c := range cs[1:] {
		if !c.Wait(faultsWait) {
			t.Errorf("client %d: %d of %d bytes echoed (reader: %v)", i+1, c.Got(), c.Sent(), c.Err())
		}
	}
	if storm.Hits() == 0 {
		t.Errorf("no failure injected in %d calls", storm.Calls())
	}
	t.Logf("%d failures injected; target echoed %d of %d bytes", storm.Hits(), target.Got(), target.Sent())
	return cs, retried
}

// CheckOpError returns nil if err is what a server reports of a call op
// ("read", "write") failing with errno: a *net.OpError of op around an
// *os.SyscallError matching errno; otherwise an error that says what err
// is instead. Safe from any goroutine.
func CheckOpError(err error, op string, errno syscall.Errno) error {
	var oe *net.OpError
	var se *os.SyscallError
	switch {
	case err == nil:
		return errors.New("no error")
	case !errors.As(err, &oe) || oe.Op != op:
		return fmt.Errorf("%v, want a *net.OpError of %q", err, op)
	case !errors.As(err, &se) || !errors.Is(err, errno):
		return fmt.Errorf("%v, want an *os.SyscallError of %v", err, errno)
	}
	return nil
}
