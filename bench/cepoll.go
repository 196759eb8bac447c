package main

// cepoll is the C epoll reference server: see cepoll/cepoll.c.
var cepoll = cServer("cepoll",
	"C reference (cepoll/cepoll.c, cc -O2): a thread per CPU, each with its own SO_REUSEPORT listener and level-triggered epoll, 64 KiB buffer, pending output kept per connection")
