//go:build !race

package httpd

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestUpgradeHeadAllocs checks the 101 head Upgrade writes, and that
// writing it costs no allocation once its pool is warm: every upgrade
// otherwise left its grown buffer to the collector.
func TestUpgradeHeadAllocs(t *testing.T) {
	h := http.Header{"Upgrade": {"websocket"}, "Connection": {"Upgrade"}, "Sec-Websocket-Accept": {"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="}}
	head := upgradeHead(h)
	want := "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-Websocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nUpgrade: websocket\r\n\r\n"
	if got := head.String(); got != want {
		t.Errorf("upgradeHead = %q, want %q", got, want)
	}
	putUpgradeHead(head)
	if n := testing.AllocsPerRun(1000, func() { putUpgradeHead(upgradeHead(h)) }); n > 0 {
		t.Errorf("upgradeHead: %v allocations, want 0", n)
	}
	big := http.Header{"Set-Cookie": {strings.Repeat("x", maxPooledHead)}}
	head = upgradeHead(big)
	if head.Cap() <= maxPooledHead {
		t.Fatalf("a head with a %d-byte cookie has cap %d", maxPooledHead, head.Cap())
	}
	putUpgradeHead(head) // dropped, not pooled
	for range 100 {
		if b := upgradeHeads.Get().(*bytes.Buffer); b.Cap() > maxPooledHead || b.Len() != 0 {
			t.Fatalf("upgradeHeads gave a buffer of cap %d, len %d: want at most %d, empty", b.Cap(), b.Len(), maxPooledHead)
		}
	}
}
