//go:build !race

package http1_test

const raceEnabled = false
