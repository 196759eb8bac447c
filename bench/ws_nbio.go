package main

import "github.com/galeio/gale/bench/internal/wsnbio"

var wsNbio = wsServer{name: "nbio", version: "github.com/lesismal/nbio v1.6.12", serve: wsnbio.Serve,
	note: "its websocket server example: nbhttp.NewEngine(nbhttp.Config{Network: \"tcp\", Addrs, Handler: mux}) at its defaults (IOModNonBlocking: every connection on the pollers, NumCPU/4 of them, at least 1; 120 s keep-alive read deadline), websocket.NewUpgrader() with OnMessage writing back c.WriteMessage(messageType, data); no compression"}
