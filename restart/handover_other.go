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
