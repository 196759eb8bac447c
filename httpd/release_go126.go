//go:build !go1.27

package httpd

// connectTunnels: see release_go127.go. Before Go 1.27 net/http frames
// an answer to CONNECT like any other.
const connectTunnels = false
