package main

import (
	"net"
	"strconv"

	"github.com/galeio/gale/internal/tools/benchrun"
	"github.com/valyala/fasthttp"
)

var fasthttpServer = benchrun.Server{Name: "fasthttp", ServeHTTP: serveFasthttp,
	Note: "fasthttp v1.78.0: a fasthttp.Server with default settings (a worker goroutine per connection, from its pool) serving the listener; a RequestHandler answering benchrun's three paths as HTTPHandler does, the POST's body read whole by fasthttp before the handler (its default), whose length the handler answers"}

// serveFasthttp is fasthttp's server, as its README and package example
// write it (fasthttp.Server{Handler: h}), on ln.
func serveFasthttp(ln net.Listener, ready func(net.Addr)) error {
	s := &fasthttp.Server{Handler: fasthttpBench}
	ready(ln.Addr())
	return s.Serve(ln)
}

// bulkBody is benchrun.BulkPath's answer.
var bulkBody = benchrun.BulkBody()

// fasthttpBench answers benchrun's paths as benchrun.HTTPHandler does,
// in fasthttp's API: the same bodies and Content-Types.
func fasthttpBench(ctx *fasthttp.RequestCtx) {
	switch string(ctx.Path()) {
	case benchrun.HelloPath:
		ctx.SetContentType("text/plain")
		ctx.WriteString(benchrun.HelloBody)
	case benchrun.BulkPath:
		ctx.SetContentType("application/octet-stream")
		ctx.Write(bulkBody)
	case benchrun.UploadPath:
		if !ctx.IsPost() {
			ctx.Error("POST only", fasthttp.StatusMethodNotAllowed)
			return
		}
		ctx.SetContentType("text/plain")
		ctx.WriteString(strconv.Itoa(len(ctx.PostBody())))
	default:
		ctx.NotFound()
	}
}
