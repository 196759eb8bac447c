package poller

import "golang.org/x/sys/unix"

// keptOpts are the keep-alive timings package net also sets.
var keptOpts = []sockOpt{
	{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE},
	{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL},
	{unix.IPPROTO_TCP, unix.TCP_KEEPCNT},
}
