package stresstest

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// raceHeader is the size of a RaceMsg's header: the writer, the sequence
// number and the body's length.
const raceHeader = 9

// raceMaxBody bounds the body of a message ParseRace takes for one: a
// longer length means the bytes are not a header.
const raceMaxBody = 1 << 20

// RaceRounds runs round(0), round(1) and on, rounds times (short times
// under -short), and stops t at the first round that fails it: the rounds
// of a race test, each racing writers, closes and stops on a connection
// of its own. round runs on the test's goroutine.
func RaceRounds(t *testing.T, rounds, short int, round func(round int)) {
	t.Helper()
	if testing.Short() {
		rounds = short
	}
	for r := range rounds {
		round(r)
		if t.Failed() {
			t.Fatalf("round %d failed", r)
		}
	}
}

// RaceMsg returns writer id's message number seq with a body of n bytes:
// a 9-byte header (id, then seq and n as big-endian uint32s) and the
// body, every byte of which is id. A peer reading the messages of racing
// writers (ParseRace) sees any that is torn, interleaved with another,
// out of order or missing. id is below 256.
func RaceMsg(id, seq, n int) []byte {
	b := make([]byte, raceHeader, raceHeader+n)
	b[0] = byte(id)
	binary.BigEndian.PutUint32(b[1:], uint32(seq))
	binary.BigEndian.PutUint32(b[5:], uint32(n))
	for range n {
		b = append(b, byte(id))
	}
	return b
}

// RaceHeader is a RaceMsg's header as the peer read it.
type RaceHeader struct {
	ID, Seq int
	Body    int // the body's length
}

// Size returns the length of the whole message, header included.
func (h RaceHeader) Size() int { return raceHeader + h.Body }

// RaceStream is what a peer read of racing writers' messages (RaceMsg).
type RaceStream struct {
	// Whole are the messages read whole, in the order read.
	Whole []RaceHeader
	// Delivered counts, by writer, its messages read whole: each
	// writer's messages arrived in order from 0, so they are its first
	// Delivered[id].
	Delivered []int
	// CutLen is how many bytes of a message the stream ends with, header
	// included: 0 if it ends between messages.
	CutLen int
	// Cut is the header of that message, nil if the stream ends before
	// its header does (or between messages).
	Cut *RaceHeader
}

// ParseRace parses the stream a peer read of the messages of writers
// racing writers (RaceMsg), and reports the first that is foreign, out of
// its writer's order, or interleaved with another (its body, or the part
// of it read, holds another byte than its writer's). A message the stream
// ends in the middle of is no error here: whether it may be cut is for
// the caller to say, from RaceStream.Cut and CutLen. It reads no
// connection: safe from any goroutine.
func ParseRace(stream []byte, writers int) (RaceStream, error) {
	s := RaceStream{Delivered: make([]int, writers)}
	for off := 0; off < len(stream); {
		rest := stream[off:]
		if len(rest) < raceHeader {
			s.CutLen = len(rest)
			return s, nil
		}
		h := RaceHeader{int(rest[0]), int(binary.BigEndian.Uint32(rest[1:])), int(binary.BigEndian.Uint32(rest[5:]))}
		switch {
		case h.ID >= writers || h.Body > raceMaxBody:
			return s, fmt.Errorf("at byte %d (message %d): header %x is not one", off, len(s.Whole), rest[:raceHeader])
		case h.Seq != s.Delivered[h.ID]:
			return s, fmt.Errorf("at byte %d (message %d): writer %d's message %d, want its %d", off, len(s.Whole), h.ID, h.Seq, s.Delivered[h.ID])
		}
		body := rest[raceHeader:min(h.Size(), len(rest))]
		for j, b := range body {
			if int(b) != h.ID {
				return s, fmt.Errorf("at byte %d, writer %d's message %d: body byte %d is %d: another write interleaved", off, h.ID, h.Seq, j, b)
			}
		}
		if len(rest) < h.Size() {
			s.Cut, s.CutLen = &h, len(rest)
			return s, nil
		}
		s.Whole = append(s.Whole, h)
		s.Delivered[h.ID]++
		off += h.Size()
	}
	return s, nil
}

// RacePeer reads what racing writers sent to the peer, to its end.
type RacePeer struct {
	d    time.Duration
	read chan racePeerRead
}

type racePeerRead struct {
	b   []byte
	err error
}

// ReadRace starts reading peer to its end (EOF, an error, or d from now)
// on a goroutine of its own, which no one else may read peer from.
func ReadRace(peer net.Conn, d time.Duration) *RacePeer {
	p := &RacePeer{d: d, read: make(chan racePeerRead, 1)}
	go func() {
		peer.SetReadDeadline(time.Now().Add(d))
		b, err := io.ReadAll(peer)
		p.read <- racePeerRead{b, err}
	}()
	return p
}

// End waits for the end of the peer's stream, for at most ReadRace's d
// (a read that does not end fails t), and returns the bytes read and the
// read's error: nil at EOF. Once only, from the test's goroutine.
func (p *RacePeer) End(t testing.TB) ([]byte, error) {
	t.Helper()
	select {
	case r := <-p.read:
		return r.b, r.err
	case <-time.After(p.d):
		t.Fatalf("the peer's read did not end within %v", p.d)
		return nil, nil
	}
}
