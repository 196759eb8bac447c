package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The chat's history is one Redis Stream (XADD, XREAD, XRANGE), not a
// pub/sub channel: pub/sub delivers to whoever subscribes at that moment
// and forgets, so a client that was moving from one instance to another
// would miss what was said meanwhile. A stream keeps the messages under
// IDs that grow, so a reconnecting client names the last ID it saw and is
// sent what follows. It is capped at about maxLen entries (XADD MAXLEN
// ~): a client away for longer than that many messages misses the
// oldest of them.
const maxLen = 100_000

// readBlock bounds one XREAD wait, so that the reader notices a shutdown.
const readBlock = time.Second

// replayBatch is the number of entries one XRANGE returns on catch-up.
const replayBatch = 500

// streamID is a Redis Stream entry ID, "<ms>-<seq>", as two numbers, so
// that IDs compare in the stream's order. The zero ID comes before all.
type streamID struct{ ms, seq uint64 }

// parseID parses s; "" and a malformed ID are the zero ID.
func parseID(s string) streamID {
	ms, seq, ok := strings.Cut(s, "-")
	if !ok {
		return streamID{}
	}
	a, err1 := strconv.ParseUint(ms, 10, 64)
	b, err2 := strconv.ParseUint(seq, 10, 64)
	if err1 != nil || err2 != nil {
		return streamID{}
	}
	return streamID{a, b}
}

func (id streamID) String() string {
	return strconv.FormatUint(id.ms, 10) + "-" + strconv.FormatUint(id.seq, 10)
}

// less reports whether id comes before o in the stream.
func (id streamID) less(o streamID) bool {
	return id.ms < o.ms || id.ms == o.ms && id.seq < o.seq
}

// entry is a stream entry, with its message as the clients receive it.
type entry struct {
	id   streamID
	wire []byte // the {"type":"msg",...} event, encoded once for all
}

// toEntry converts a stream entry; its fields are client, seq and text.
func toEntry(m redis.XMessage) entry {
	str := func(k string) string { s, _ := m.Values[k].(string); return s }
	seq, _ := strconv.ParseUint(str("seq"), 10, 64)
	ev := event{Type: "msg", ID: m.ID, Client: str("client"), Seq: seq, Text: str("text")}
	return entry{id: parseID(m.ID), wire: encode(ev)}
}

// history is the stream of one chat room.
type history struct {
	rdb *redis.Client
	key string
}

// add appends a message and returns its ID.
func (h history) add(ctx context.Context, ev event) (string, error) {
	return h.rdb.XAdd(ctx, &redis.XAddArgs{
		Stream: h.key,
		MaxLen: maxLen,
		Approx: true,
		Values: []any{"client", ev.Client, "seq", ev.Seq, "text", ev.Text},
	}).Result()
}

// last returns the ID of the newest entry, the zero ID when there is none.
func (h history) last(ctx context.Context) (streamID, error) {
	ms, err := h.rdb.XRevRangeN(ctx, h.key, "+", "-", 1).Result()
	if err != nil || len(ms) == 0 {
		return streamID{}, err
	}
	return parseID(ms[0].ID), nil
}

// after returns up to replayBatch entries that follow id.
func (h history) after(ctx context.Context, id streamID) ([]entry, error) {
	ms, err := h.rdb.XRangeN(ctx, h.key, "("+id.String(), "+", replayBatch).Result()
	return toEntries(ms), err
}

// wait returns the entries that follow id, waiting up to readBlock for
// one; none when the wait ends first.
func (h history) wait(ctx context.Context, id streamID) ([]entry, error) {
	res, err := h.rdb.XRead(ctx, &redis.XReadArgs{
		Streams: []string{h.key, id.String()},
		Count:   replayBatch,
		Block:   readBlock,
	}).Result()
	if err == redis.Nil || len(res) == 0 {
		return nil, nil
	}
	return toEntries(res[0].Messages), err
}

func toEntries(ms []redis.XMessage) []entry {
	es := make([]entry, len(ms))
	for i, m := range ms {
		es[i] = toEntry(m)
	}
	return es
}

// encode returns e in JSON.
func encode(e event) []byte {
	b, err := json.Marshal(e)
	if err != nil {
		panic(err) // strings and numbers only: cannot fail
	}
	return b
}
