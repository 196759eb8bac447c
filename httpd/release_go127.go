//go:build go1.27

package httpd

// connectTunnels says whether this Go's net/http frames a 2xx answer to
// CONNECT as a tunnel (RFC 9110 section 9.3.6): no Content-Length or
// Transfer-Encoding, no Connection: close, and the connection not
// reused, whatever the status. It does from Go 1.27 on; httpd answers
// as the net/http it is built with does.
const connectTunnels = true
