//go:build !race

package engine_test

// raceEnabled reports whether the tests run under the race detector,
// which slows them and grows their memory: measurements relax their bounds.
const raceEnabled = false
