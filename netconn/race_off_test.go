//go:build !race

package netconn_test

const raceEnabled = false
