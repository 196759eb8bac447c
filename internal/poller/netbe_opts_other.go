//go:build unix && !linux

package poller

// keptOpts: elsewhere the backend keeps TCP_NODELAY and SO_KEEPALIVE
// only; package net's keep-alive timing matters only where keep-alive
// was on already.
var keptOpts []sockOpt
