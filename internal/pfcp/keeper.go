package pfcp

import (
	"log/slog"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/sluice-upf/sluice/internal/journal"
)

// keeper keeps the state (state.go) in a journal. The serve loop marks
// what it changes where it changes it; at the end of each turn (flush) it
// collects the changed entities' values, copies that no later turn
// touches, and hands them with the turn's datagrams to the writer
// goroutine, which encodes them, appends them to the journal (and, with
// fsync, syncs it) and only then sends the datagrams. So a response, a
// report or anything else an SMF sees is never ahead of the journal, and
// a new process taking over after kill -9 knows all that the SMFs were
// told; and the serve loop spends no time encoding. The writer compacts
// the journal on its own (compact.go), by copying each entity's last
// change into a new file.
type keeper struct {
	j        *journal.Journal
	identity string // the maps' (datapath.Identity), in the journal's header
	fsync    bool   // each record on the disk before its datagrams leave

	// What changed since the last turn, marked by the serve loop.
	sessions  map[uint64]struct{}
	assocs    map[string]struct{}
	kept      map[string]struct{}
	reports   map[uint32]struct{}
	responses []cacheKey
	forgets   []netip.Addr
	last      savedServer // the server's own state as last handed on

	// Behind (a record failed, so the journal lacks a change), the serve
	// loop hands the whole state on at most once a second: at retryAt,
	// Unix ns.
	retryAt atomic.Int64

	// The writer goroutine's.
	index     *index // where each entity's last change lies
	wholeSize int64  // the journal's when last written whole
	behind    bool   // a record failed: the journal lacks a change
	buf       []byte // the record being made
	stats     journalCounters
}

// journalCounters are what the writer did, for metrics.
type journalCounters struct {
	records, bytes, rewrites, errors atomic.Uint64
	size                             atomic.Int64
	behind                           atomic.Bool
}

// JournalStats are what the keeper did.
type JournalStats struct {
	Records, Bytes uint64 // appended
	Rewrites       uint64 // whole: at the start, and when compacted or repaired
	Errors         uint64 // appends, rewrites or syncs that failed
	Size           int64  // of the file
	Behind         bool   // a change is not in the journal: a crash now would lose it
}

// A journal is compacted once it holds this many times the state it
// stands for, and at least minCompact bytes. The state is the larger of
// what the entities' last records add up to (responses aside: they are
// gone in 30 s) and the journal's size when last written whole, so a
// state that only grows is never rewritten (that would write each session
// again for nothing), nor one just written whole with its responses.
const compactRatio = 2

var minCompact int64 = 16 << 20 // a var: a test compacts sooner

func newKeeper(j *journal.Journal, identity string, fsync bool) *keeper {
	return &keeper{j: j, identity: identity, fsync: fsync,
		sessions: map[uint64]struct{}{}, assocs: map[string]struct{}{}, kept: map[string]struct{}{}, reports: map[uint32]struct{}{},
		index: newIndex(0, 0)}
}

// Marks of what changed; a server that keeps no journal has a nil keeper.

func (k *keeper) session(seid uint64) {
	if k != nil {
		k.sessions[seid] = struct{}{}
	}
}

func (k *keeper) assoc(node string) {
	if k != nil {
		k.assocs[node] = struct{}{}
	}
}

func (k *keeper) keptUsage(node string) {
	if k != nil {
		k.kept[node] = struct{}{}
	}
}

func (k *keeper) report(seq uint32) {
	if k != nil {
		k.reports[seq] = struct{}{}
	}
}

func (k *keeper) response(key cacheKey) {
	if k != nil {
		k.responses = append(k.responses, key)
	}
}

func (k *keeper) forget(peer netip.Addr) {
	if k != nil {
		k.forgets = append(k.forgets, peer)
	}
}

// turn is what one turn of the serve loop hands the writer goroutine.
type turn struct {
	changes []change
	whole   bool // changes are the whole state
	closed  bool // the last turn: the process stops cleanly
	out     []outgoing
}

// collect is the turn's changes, or the whole state when the journal is
// behind and due to be written again; the marks are cleared.
func (s *Server) collect() (cs []change, whole bool) {
	k := s.keeper
	if k.retryDue(s.now()) {
		s.entities(k.identity, func(c change) bool {
			cs = append(cs, c)
			return true
		})
		s.changes() // all in it; what the marks name too
		return cs, true
	}
	return s.changes(), false
}

// retryDue: the journal is behind, and a second has passed since it was
// last handed the whole state; if so, the next try is in a second.
func (k *keeper) retryDue(now time.Time) bool {
	if !k.stats.behind.Load() || now.UnixNano() < k.retryAt.Load() {
		return false
	}
	k.retryAt.Store(now.Add(time.Second).UnixNano())
	return true
}

// changes are what changed since the last turn; the marks are cleared.
func (s *Server) changes() []change {
	k := s.keeper
	// Room for every change marked, lists aside: the slice goes to the
	// writer with the turn, and growing it was the serve loop's largest
	// allocation here.
	cs := make([]change, 0, len(k.forgets)+1+len(k.assocs)+len(k.kept)+len(k.reports)+len(k.responses)+1+len(k.sessions))
	// Forgotten responses before responses kept since: an association that
	// began again in this turn keeps its new ones.
	for _, a := range k.forgets {
		cs = append(cs, gone(kindForget, a.String()))
	}
	if v := s.server(); !v.Recovery.Equal(k.last.Recovery) || v.Seq != k.last.Seq || v.Draining != k.last.Draining {
		cs = append(cs, set(kindServer, "", &v))
		k.last = v
	}
	for node := range k.assocs {
		cs = append(cs, s.assocChange(node))
	}
	for node := range k.kept {
		cs = append(cs, s.keptChange(node))
	}
	for seq := range k.reports {
		cs = append(cs, s.reportChange(seq))
	}
	for _, key := range k.responses {
		if c, ok := s.responseChange(key); ok {
			cs = append(cs, c)
		}
	}
	if len(k.sessions) > 0 {
		cs = append(cs, set(kindStore, "", s.store.SaveGlobals()))
	}
	for seid := range k.sessions {
		cs = append(cs, s.sessionChange(seid))
	}
	for key := range s.rules.Touched {
		cs = append(cs, s.listChange(key))
	}
	clear(k.sessions)
	clear(k.assocs)
	clear(k.kept)
	clear(k.reports)
	k.responses, k.forgets = k.responses[:0], k.forgets[:0]
	return cs
}

// write puts a turn's changes in the journal, in the writer goroutine. A
// journal that fails is a logged error and a metric, never a stop: upfd
// serves on, and the serve loop hands on the whole state to write again
// (retryDue).
func (k *keeper) write(t turn, now time.Time, log *slog.Logger) {
	switch {
	case t.whole:
		k.rewrite(k.changesOf(t.changes), log)
	case k.behind:
		return // the journal lacks a change already: only the whole state helps
	case len(t.changes) > 0:
		base := k.j.Size() + journal.HeaderSize
		k.buf = record(k.buf[:0], t.changes, func(c change, start, n int) { k.track(c, base+int64(start), n) })
		if err := k.j.Append(k.buf); err != nil {
			k.failed("append", err, now, log)
			return
		}
		k.stats.records.Add(1)
		k.stats.bytes.Add(uint64(len(k.buf)))
	}
	if t.closed && !k.behind {
		if err := k.j.Append(record(nil, []change{{Kind: kindClosed}}, nil)); err != nil {
			k.failed("close", err, now, log)
		}
	}
	k.stats.size.Store(k.j.Size())
}

// rewrite replaces the journal with the whole state, which fill puts: it
// compacts it, and repairs one that failed.
func (k *keeper) rewrite(fill func(*snapshot) error, log *slog.Logger) error {
	w := &snapshot{index: newIndex(len(k.index.live), len(k.index.responses))} // at most what the old one holds
	err := k.j.Rewrite(k.fsync, func(add func([]byte) error) error {
		w.add = add
		if err := fill(w); err != nil {
			return err
		}
		return w.flush()
	})
	if err != nil {
		k.failed("rewrite", err, time.Now(), log)
		return err
	}
	k.index, k.wholeSize = w.index, k.j.Size()
	k.behind = false
	k.stats.behind.Store(false)
	k.stats.rewrites.Add(1)
	return nil
}

// sync puts what was appended on the disk; a failure is counted and
// logged, and the datagrams leave all the same.
func (k *keeper) sync(log *slog.Logger) {
	if err := k.j.Sync(k.j.Appended()); err != nil {
		k.stats.errors.Add(1)
		log.Error("pfcp: the state journal did not reach the disk; sending anyway", "err", err)
	}
}

func (k *keeper) failed(what string, err error, now time.Time, log *slog.Logger) {
	k.stats.errors.Add(1)
	k.retryAt.Store(now.Add(time.Second).UnixNano())
	if !k.behind {
		log.Error("pfcp: the state journal failed: upfd serves on, but a crash now would lose what N4 changed since; it is written whole again once it can be",
			"what", what, "err", err)
	}
	k.behind = true
	k.stats.behind.Store(true)
}

// journalStats are the journal's counters; none without a journal.
func (s *Server) journalStats() JournalStats {
	k := s.keeper
	if k == nil {
		return JournalStats{}
	}
	return JournalStats{Records: k.stats.records.Load(), Bytes: k.stats.bytes.Load(), Rewrites: k.stats.rewrites.Load(),
		Errors: k.stats.errors.Load(), Size: k.stats.size.Load(), Behind: k.stats.behind.Load()}
}
