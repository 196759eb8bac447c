//go:build !go1.27

package httpd_test

// stdCapsHeaderValues: see release_go127_test.go.
const stdCapsHeaderValues = false
