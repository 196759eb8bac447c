package main

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"syscall"
	"time"

	"github.com/galeio/gale/restart"
)

// listenerName is the listener's name in a hand-over.
const listenerName = "http"

// listen returns the listener a running instance hands over on the
// control socket, or a new one on addr when none offers (a first start,
// or no control socket). took is the hand-over, nil for a new listener;
// its Ready tells the old instance to let go once this one serves.
func listen(ctx context.Context, addr, control string) (ln net.Listener, took *restart.Takeover, err error) {
	var inherited map[string]net.Listener
	if control != "" {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		took, err = restart.Take(tctx, control)
		cancel()
		switch {
		case err == nil:
			inherited = took.Listeners
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ECONNREFUSED):
			took = nil // nobody offers: a first start
		default:
			return nil, nil, err
		}
	}
	ln, err = restart.Listen(inherited, "tcp", addr, listenerName)
	if err != nil && took != nil {
		took.Close()
	}
	return ln, took, err
}

// offer is the hand-over offered to the next instance; its zero value,
// without a control socket, is never taken.
type offer struct{ h *restart.Handover }

// handOver, once this instance serves on ln, tells the old instance it
// took over from (took, if any) to go, and offers ln to the next one on
// the control socket.
func handOver(control string, took *restart.Takeover, ln net.Listener) (offer, error) {
	if took != nil {
		if err := took.Ready(); err != nil {
			return offer{}, err
		}
	}
	if control == "" {
		return offer{}, nil
	}
	// The old instance may still be withdrawing its own offer at the
	// same path, for a moment after Ready: ErrBusy until it has.
	deadline := time.Now().Add(5 * time.Second)
	for {
		h, err := restart.Offer(control, map[string]net.Listener{listenerName: ln})
		if !errors.Is(err, restart.ErrBusy) || time.Now().After(deadline) {
			return offer{h}, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Taken is closed once a new instance has taken the listener over.
func (o offer) Taken() <-chan struct{} {
	if o.h == nil {
		return nil
	}
	return o.h.Taken()
}

// Close withdraws the offer.
func (o offer) Close() {
	if o.h != nil {
		o.h.Close()
	}
}
