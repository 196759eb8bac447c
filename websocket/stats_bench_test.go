package websocket

import "testing"

// BenchmarkCounters measures what a message costs the Stats counters:
// two atomic adds on a line the Upgrader's connections share, from one
// goroutine and from all (the worst case: every loop and writer at once).
func BenchmarkCounters(b *testing.B) {
	var k counters
	b.Run("Sent", func(b *testing.B) {
		for b.Loop() {
			k.sent(16)
		}
	})
	b.Run("SentParallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				k.sent(16)
			}
		})
	})
}
