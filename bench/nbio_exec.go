package main

import (
	"net"
	"os"
	"runtime"

	"github.com/galeio/gale/internal/tools/benchrun"
	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/logging"
	"github.com/lesismal/nbio/taskpool"
)

var nbioExecServer = benchrun.Server{Name: "nbio-exec", Serve: serveNbioExec,
	Note: "nbio v1.6.12 with its per-connection ordered executor: OnData copies the data and hands the echo to Conn.Execute, whose jobs run in order on Engine.Execute, set to the task pool nbhttp's NewEngine makes by default (taskpool.New(NumCPU*1024-1, 64K)); otherwise as the nbio server"}

// serveNbioExec is the nbio server with OnData's work off the poller, as
// nbhttp runs its handlers by default: Conn.Execute keeps a connection's
// jobs in order and runs them one at a time, on Engine.Execute.
func serveNbioExec(ln net.Listener, ready func(net.Addr)) error {
	logging.Output = os.Stderr
	logging.SetLevel(logging.LevelWarn)
	addr := ln.Addr()
	if err := ln.Close(); err != nil {
		return err
	}
	engine := nbio.NewEngine(nbio.Config{
		Network:            "tcp",
		Addrs:              []string{addr.String()},
		MaxWriteBufferSize: 6 * 1024 * 1024,
	})
	engine.Execute = taskpool.New(runtime.NumCPU()*1024-1, 1024*64).Go
	engine.OnData(func(c *nbio.Conn, data []byte) {
		b := append([]byte{}, data...)
		c.Execute(func() { c.Write(b) })
	})
	if err := engine.Start(); err != nil {
		return err
	}
	ready(addr)
	select {}
}
