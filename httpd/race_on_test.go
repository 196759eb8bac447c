//go:build race

package httpd_test

// raceEnabled reports a -race build, which allocates where a normal one
// does not.
const raceEnabled = true
