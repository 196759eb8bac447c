// Package soak is galebench's soak test (galebench soak -d 10m -out
// DIR): it runs gale's echo servers for a long time under a random mix
// of clients and fails if a byte is lost or corrupted, an unexpected
// error occurs, or a server does not return to its idle descriptor and
// goroutine counts.
//
// # What it does
//
// Each server (by default aio and engine on every backend the machine
// has) runs in a child process, internal/tools/benchrun's server child. All are
// soaked at once, each for the whole duration, so that each sees every
// minute of it: a warm-up (a tenth of the run, at most 10 s), then, with
// every client connection closed, the idle baseline of each process,
// then the load, then the end check.
//
// The client runs Options.Conns workers per server, each one connection
// at a time, plan after plan (plan.go), drawn from a PRNG seeded from
// Options.Seed: messages of 1 B to 1 MiB, pipelined or waited for,
// pauses of a few milliseconds to a second, and an ending: a close, a
// half-close read to EOF, or a reset (SO_LINGER 0) in mid-transfer.
// Every connection sends its own stream (stream.go) and a reader
// goroutine verifies every byte of the echo in order (reader.go).
//
// A sampler reads each process's descriptors (/proc/PID/fd), goroutines
// (the child answers a command on its stdin) and resident memory
// (/proc/PID/status) at a fixed interval.
//
// # Output
//
// Run returns a Result; with Options.Out it also writes soak.jsonl (the
// settings, every sample, the phases, checks, totals and verdict, one JSON
// object a line), report.md and SVG charts of descriptors, goroutines
// and memory over time (benchrun.TimeChart).
//
// # Limits
//
// Linux only in practice: the samples come from /proc. Loopback only.
// Client connections are bounded by a tenth of the open-file limit.
package soak
