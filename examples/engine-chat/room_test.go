package main

import (
	"slices"
	"testing"
)

// TestJoinTellsThoseBefore checks that a join names the members who were
// in the room when it happened, and only them: a client who joins just
// after is not told of the earlier one (the chat server once took the
// members for the "joined" line after it had greeted the newcomer, and a
// client who joined in that gap read a line about someone who came before
// it; examples/engine-chat's TestSlowClient failed so in CI).
func TestJoinTellsThoseBefore(t *testing.T) {
	r := newRoom()
	a, b, c := new(session), new(session), new(session)
	for _, tc := range []struct {
		s    *session
		nick string
		want []*session
	}{{a, "a", nil}, {b, "b", []*session{a}}, {c, "c", []*session{a, b}}} {
		before, ok := r.join(tc.s, tc.nick)
		if !ok || !slices.Equal(before, tc.want) {
			t.Errorf("join %s: %d before, %v; want %d, true", tc.nick, len(before), ok, len(tc.want))
		}
	}
	if _, ok := r.join(new(session), "A"); ok {
		t.Error(`join "A" after "a": ok, want taken`)
	}
}
