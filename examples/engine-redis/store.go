package main

import (
	"hash/maphash"
	"strconv"
	"sync"
)

// shards is the number of parts of the store, each with its own lock, so
// that loops working on different keys seldom wait for each other.
const shards = 64

// store maps keys to values. Its methods are safe from any goroutine:
// the engine's loops call them at the same time.
type store struct {
	seed   maphash.Seed
	shards [shards]shard
}

type shard struct {
	mu sync.Mutex
	m  map[string]*entry
	_  [48]byte // a cache line per shard: neighbours' locks do not share one
}

// entry holds a value; the map holds pointers so that overwriting a key
// changes the entry in place, with no new map key.
type entry struct{ v []byte }

func newStore() *store {
	s := &store{seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].m = make(map[string]*entry)
	}
	return s
}

func (s *store) shard(key []byte) *shard {
	return &s.shards[maphash.Bytes(s.seed, key)%shards]
}

// set stores a copy of value under key. Overwriting a value reuses its
// array when the new value fits and would not waste most of it, so a
// steady stream of SETs of one size allocates nothing.
func (s *store) set(key, value []byte) {
	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.m[string(key)]; e != nil { // the conversion does not allocate
		if len(value) <= cap(e.v) && cap(e.v) <= 2*len(value)+64 {
			e.v = append(e.v[:0], value...)
		} else {
			e.v = append([]byte(nil), value...)
		}
		return
	}
	sh.m[string(key)] = &entry{v: append([]byte(nil), value...)}
}

// appendGet appends the reply to GET key to dst: the value as a bulk
// string, or the null bulk string if key is not set. The value is copied
// under the shard's lock, so a concurrent set cannot tear it.
func (s *store) appendGet(dst, key []byte) []byte {
	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[string(key)]
	if e == nil {
		return append(dst, "$-1\r\n"...)
	}
	return appendBulk(dst, e.v)
}

// del removes key and reports whether it was set.
func (s *store) del(key []byte) bool {
	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m[string(key)] == nil {
		return false
	}
	delete(sh.m, string(key))
	return true
}

// appendBulk appends b as a RESP bulk string: "$3\r\nfoo\r\n".
func appendBulk(dst, b []byte) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, "\r\n"...)
	dst = append(dst, b...)
	return append(dst, "\r\n"...)
}
