// Package http1 is the former name of package
// [github.com/galeio/gale/httpd], kept so that programs written against
// it build unchanged while they move: every name here is httpd's (its
// types are aliases, so values pass between the two freely).
//
// The package was renamed when it began to serve HTTP/2 beside HTTP/1.x:
// "http1" would have told its readers the opposite of what it does.
//
// Deprecated: import github.com/galeio/gale/httpd instead. This package
// will be removed in a release after 2027-06.
package http1

import (
	"net/http"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
)

// Server is [httpd.Server].
type Server = httpd.Server

// Mode is [httpd.Mode].
type Mode = httpd.Mode

// Protocol is [httpd.Protocol].
type Protocol = httpd.Protocol

// Stats is [httpd.Stats].
type Stats = httpd.Stats

// The modes, as httpd's.
const (
	ModeLoop  = httpd.ModeLoop
	ModeMixed = httpd.ModeMixed
)

// The defaults, as httpd's.
const (
	DefaultMaxHeaderValueCount = httpd.DefaultMaxHeaderValueCount
	DefaultMixedThreshold      = httpd.DefaultMixedThreshold
	DefaultHTTP2StallTimeout   = httpd.DefaultHTTP2StallTimeout
)

// The errors, as httpd's (the same values).
var (
	ErrServerClosed = httpd.ErrServerClosed
	ErrNotLoop      = httpd.ErrNotLoop
)

// Upgrade is [httpd.Upgrade].
func Upgrade(w http.ResponseWriter, p Protocol) (*engine.Conn, error) { return httpd.Upgrade(w, p) }

// AfterHandler is [httpd.AfterHandler].
func AfterHandler(w http.ResponseWriter, f func()) bool { return httpd.AfterHandler(w, f) }
