package pfcp

import (
	"context"
	"log/slog"
	"time"
)

// tallyEvery is how long a tally counts before it sums up.
const tallyEvery = 10 * time.Second

// tally logs a kind of event once an interval: the first as it comes, the
// others counted and summed up in one line when the interval is over. A
// flood of them (requests unanswered by a slow SMF, datagrams refused)
// costs a few lines, and no memory beyond its kinds, which are the
// messages: constants of the code.
type tally struct {
	log   *slog.Logger
	until time.Time
	more  map[string]tallied // by message
}

type tallied struct {
	level slog.Level
	n     int // after the first
}

func newTally(log *slog.Logger) *tally { return &tally{log: log, more: map[string]tallied{}} }

// note logs msg if it is the first of its kind this interval, else counts it.
func (t *tally) note(level slog.Level, msg string, args ...any) {
	if k, seen := t.more[msg]; seen {
		k.n++
		t.more[msg] = k
		return
	}
	t.more[msg] = tallied{level: level}
	t.log.Log(context.Background(), level, msg, args...)
}

// sum logs how many of each kind went unlogged, once the interval is over.
func (t *tally) sum(now time.Time) {
	if now.Before(t.until) {
		return
	}
	for msg, k := range t.more {
		if k.n > 0 {
			t.log.Log(context.Background(), k.level, msg+" (and more like it)", "more", k.n, "within", tallyEvery)
		}
	}
	clear(t.more)
	t.until = now.Add(tallyEvery)
}
