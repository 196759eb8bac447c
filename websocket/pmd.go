package websocket

// pmdState is a connection's permessage-deflate agreement (placeholder:
// the codec and negotiation land with pmd's own change).
type pmdState struct {
	on bool
}
