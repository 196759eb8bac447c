package main

// curing is cepoll's echo server on raw io_uring: see curing/curing.c.
var curing = cServer("curing",
	"C io_uring reference (curing/curing.c, cc -O2, no liburing): a thread per CPU, each with its own SO_REUSEPORT listener and ring (SINGLE_ISSUER|DEFER_TASKRUN), multishot accept, multishot receive from 64 provided 32 KiB buffers, output copied per connection and sent with one send at a time")
