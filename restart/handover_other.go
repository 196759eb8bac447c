//go:build !unix

package restart

import (
	"context"
	"errors"
	"fmt"
	"net"
)

// Offer fails: descriptors cannot be passed over a Unix socket here.
func Offer(path string, lns map[string]net.Listener) (*Handover, error) {
	return nil, fmt.Errorf("restart: Offer: %w", errors.ErrUnsupported)
}

// Take fails: descriptors cannot be passed over a Unix socket here.
func Take(ctx context.Context, path string) (*Takeover, error) {
	return nil, fmt.Errorf("restart: Take: %w", errors.ErrUnsupported)
}

// Ready fails: there is no take-over here.
func (t *Takeover) Ready() error { return fmt.Errorf("restart: Ready: %w", errors.ErrUnsupported) }

// Close does nothing: there is no take-over here.
func (t *Takeover) Close() error { return nil }

// ReadyWith fails: there is no take-over here.
func (t *Takeover) ReadyWith(ctx context.Context, serve func(nc net.Conn, input []byte)) error {
	return fmt.Errorf("restart: ReadyWith: %w", errors.ErrUnsupported)
}

// SendConn fails, and closes nc: there is no hand-over here.
func (h *Handover) SendConn(nc net.Conn, input []byte) error {
	nc.Close()
	return fmt.Errorf("restart: SendConn: %w", errors.ErrUnsupported)
}

// ConnsDone returns nil: there is no take-over here.
func (t *Takeover) ConnsDone() <-chan struct{} { return nil }

// ConnsErr returns nil: there is no take-over here.
func (t *Takeover) ConnsErr() error { return nil }
