// Package stresstest is the client side of the stress tests that aio and
// engine share: connection churn, slowloris, hostile non-readers and the
// fault storms. Each driver takes the address of a server under test,
// in the manner of x/net/nettest's TestConn: the test in aio or engine
// starts its own server (a WaitIO loop, or callbacks) on a loopback
// address, hands the address over, and keeps only the checks of what its
// API counts (Stats, OnClose errors). The drivers dial with package net,
// bound every wait, and return or report the first failure.
//
// For tests only: the standard library and the other testkit packages.
package stresstest
