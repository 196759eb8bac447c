// Package faulttest injects system-call failures into gale's socket layer
// for tests: storms in which calls of chosen kinds fail with a chosen
// errno every few calls, on every backend (the epoll backend and engine's
// direct writes make the calls through internal/sock; the io_uring backend
// consults the same hook when it prepares an operation, see
// internal/poller/uring_fault_linux.go).
//
// For tests only. One storm at a time per process: tests that use it must
// not run in parallel.
//
// Linux only: the hook lives in internal/sock's Linux system calls.
package faulttest
