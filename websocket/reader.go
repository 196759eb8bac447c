package websocket

// reader is the loop's frame parser state (placeholder).
type reader struct{}
