package metrics

import (
	"maps"
	"slices"
	"strconv"

	"github.com/galeio/gale/websocket"
)

type wsSource struct {
	name string
	s    WebSocketStats
}

func (s wsSource) kind() string  { return "websocket" }
func (s wsSource) label() string { return s.name }
func (s wsSource) snapshot() any { return s.s.Stats() }

func (s wsSource) collect(fs *families, snap any) {
	st := snap.(websocket.Stats)
	n := s.name
	fs.gauge("gale_websocket_connections", "WebSocket connections open (OnOpen ran, OnClose not yet).", int64(st.Open), "name", n)
	fs.counter("gale_websocket_received_messages_total", "Messages handed to OnMessage.", st.MessagesIn, "name", n)
	fs.counter("gale_websocket_received_bytes_total", "Bytes of the messages handed to OnMessage, decompressed.", st.BytesIn, "name", n)
	fs.counter("gale_websocket_sent_messages_total", "Messages the connections took to send.", st.MessagesOut, "name", n)
	fs.counter("gale_websocket_sent_bytes_total", "Bytes of the messages taken to send, before compression.", st.BytesOut, "name", n)
	for _, code := range slices.Sorted(maps.Keys(st.Closes)) {
		fs.counter("gale_websocket_closes_total", "Connections closed, by close status (1006: without a close frame).",
			st.Closes[code], "name", n, "code", strconv.Itoa(int(code)))
	}
}
