package main

import "github.com/galeio/gale/bench/internal/wsgale"

var wsGale = wsServer{name: "gale", version: "github.com/galeio/gale (this tree)", serve: wsgale.Serve,
	note: "httpd.Server{Handler: mux} at its defaults (loops: GOMAXPROCS, epoll), websocket.Upgrader at /ws with default Options (no compression); the upgraded connection stays on its loop, OnMessage writes back c.WriteMessage(typ, data)"}
