//go:build race

package netconn_test

// raceEnabled reports a -race build, whose instrumented copies are
// about fifty times slower.
const raceEnabled = true
