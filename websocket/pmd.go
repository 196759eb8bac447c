package websocket

// pmdState is a connection's permessage-deflate agreement (placeholder
// until the codec lands: nothing is negotiated).
type pmdState struct {
	on      bool
	outBits uint8
	win     *struct{}
}

func negotiateServer([]string, CompressionMode) (pmdState, string, bool) {
	return pmdState{}, "", false
}
func clientOffer(CompressionMode) string                         { return "" }
func acceptResponse([]string, CompressionMode) (pmdState, error) { return pmdState{}, nil }
func compress(dst, src []byte, level int, bits uint8) []byte     { return append(dst, src...) }
func (st *pmdState) inflate(dst, src []byte, limit int) ([]byte, error) {
	return append(dst, src...), nil
}

type deflateStream struct{}

func newDeflateStream(level int, bits uint8) *deflateStream { return &deflateStream{} }
func (s *deflateStream) write(dst, p []byte) []byte         { return append(dst, p...) }
func (s *deflateStream) finish(dst []byte) []byte           { return dst }
func (s *deflateStream) release()                           {}
