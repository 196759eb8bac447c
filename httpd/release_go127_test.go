//go:build go1.27

package httpd_test

// stdCapsHeaderValues says whether the net/http the tests compare with
// caps a head's field lines (Server.MaxHeaderValueCount, from Go 1.27).
const stdCapsHeaderValues = true
