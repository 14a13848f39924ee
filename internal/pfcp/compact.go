package pfcp

import (
	"bufio"
	"cmp"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"time"

	"github.com/sluice-upf/sluice/internal/journal"
	"github.com/sluice-upf/sluice/internal/saved"
)

// The writer goroutine knows where each entity's last change lies in the
// journal (its index), so that it compacts the journal by copying those
// changes into a new file: nothing is encoded again, and nothing is asked
// of the serve loop, which goes on serving. Only a journal that failed
// (behind) needs the whole state from the serve loop.

// span is where a change lies in the journal: its encoding, n bytes at off.
type span struct {
	off int64
	n   int
}

// responseSpan is where a kept response lies, when it expires (Unix ns)
// and whom from: a compaction after it expired, or after its peer's
// responses were forgotten, leaves it out.
type responseSpan struct {
	span
	expires int64
	peer    [16]byte // As16: netip.Addr holds a pointer
}

// index is where each entity's last change lies in a journal. Responses,
// half the changes under load and gone in 30 s, are kept apart in the
// order they were written, which is the order they expire in: a change
// that replaces one is always written after it, so nothing is sorted or
// looked up for them, and nothing in their list is a pointer the garbage
// collector would follow.
type index struct {
	live      map[entityKey]span // responses aside
	liveBytes int64              // their length
	responses []responseSpan     // in file order; one answered again is in it twice, and the later counts
	forgotten map[[16]byte]int64 // a peer's responses written before this offset are gone
}

// newIndex is an index with room for entities and responses.
func newIndex(entities, responses int) *index {
	return &index{live: make(map[entityKey]span, entities), responses: make([]responseSpan, 0, responses),
		forgotten: map[[16]byte]int64{}}
}

// placed is what the index keeps of a change: its entity, whether it is
// gone, and a response's expiry and peer.
type placed struct {
	key     entityKey
	gone    bool
	expires int64    // a response's
	peer    [16]byte // a response's
}

func placedOf(c change) placed {
	p := placed{key: entityKey{c.Kind, c.Key}, gone: c.Val == nil}
	if r, ok := c.Val.(*savedResponse); ok {
		p.expires, p.peer = r.Expires.UnixNano(), r.From.Addr().As16()
	}
	return p
}

// add keeps where a change lies.
func (x *index) add(p placed, sp span) {
	switch p.key.kind {
	case kindClosed:
	case kindForget:
		if a, err := netip.ParseAddr(p.key.key); err == nil {
			x.forgotten[a.As16()] = sp.off
		}
	case kindResponse:
		x.responses = append(x.responses, responseSpan{sp, p.expires, p.peer})
	default:
		x.liveBytes -= int64(x.live[p.key].n)
		if p.gone {
			delete(x.live, p.key)
			return
		}
		x.live[p.key] = sp
		x.liveBytes += int64(sp.n)
	}
}

// kept: the response is still kept at now.
func (x *index) kept(r responseSpan, now int64) bool {
	gone, ok := x.forgotten[r.peer]
	return r.expires > now && !(ok && r.off < gone)
}

// wholeBatch is the changes a record of the whole state holds.
const wholeBatch = 1024

// track keeps where a change written at off lies.
func (k *keeper) track(c change, off int64, n int) { k.index.add(placedOf(c), span{off, n}) }

// compactIfDue rewrites the journal once it holds compactRatio times the
// state it stands for.
func (k *keeper) compactIfDue(now time.Time, log *slog.Logger) {
	if k.behind || k.j.Size() < max(minCompact, compactRatio*max(k.index.liveBytes, k.wholeSize)) {
		return
	}
	if k.rewrite(k.copyLive(now), log) == nil {
		k.stats.size.Store(k.j.Size())
	}
}

// copyLive puts each entity's last change, and each response still kept,
// read from the journal in the order they lie there.
func (k *keeper) copyLive(now time.Time) func(*snapshot) error {
	return func(w *snapshot) error {
		x := k.index
		entities := make([]placedSpan, 0, len(x.live))
		for key, sp := range x.live {
			entities = append(entities, placedSpan{placed{key: key}, sp})
		}
		slices.SortFunc(entities, func(a, b placedSpan) int { return cmp.Compare(a.sp.off, b.sp.off) })
		r := bufio.NewReaderSize(io.NewSectionReader(k.j, 0, k.j.Size()), 1<<20)
		var at int64
		var b []byte
		copyOne := func(p placedSpan) error {
			if _, err := r.Discard(int(p.sp.off - at)); err != nil {
				return err
			}
			b = slices.Grow(b[:0], p.sp.n)[:p.sp.n]
			if _, err := io.ReadFull(r, b); err != nil {
				return err
			}
			at = p.sp.off + int64(p.sp.n)
			return w.put(p.placed, b)
		}
		responses := x.responses
		for len(entities) > 0 || len(responses) > 0 {
			if len(responses) > 0 && (len(entities) == 0 || responses[0].off < entities[0].sp.off) {
				resp := responses[0]
				responses = responses[1:]
				if x.kept(resp, now.UnixNano()) {
					p := placed{key: entityKey{kind: kindResponse}, expires: resp.expires, peer: resp.peer}
					if err := copyOne(placedSpan{p, resp.span}); err != nil {
						return err
					}
				}
				continue
			}
			if err := copyOne(entities[0]); err != nil {
				return err
			}
			entities = entities[1:]
		}
		return nil
	}
}

// changesOf puts the whole state as the serve loop handed it on.
func (k *keeper) changesOf(cs []change) func(*snapshot) error {
	return func(w *snapshot) error {
		var b []byte
		for i, c := range cs {
			b = saved.Append(b[:0], &cs[i])
			if err := w.put(placedOf(c), b); err != nil {
				return err
			}
		}
		return nil
	}
}

// snapshot writes the whole state into a journal.Rewrite, wholeBatch
// changes a record, and indexes the new file.
type snapshot struct {
	add     func([]byte) error
	size    int64 // of the new file so far
	payload []byte
	pending []placedSpan // the changes in payload, where they lie in it
	index   *index
}

type placedSpan struct {
	placed
	sp span
}

// put adds one change, its encoding in b (copied).
func (w *snapshot) put(p placed, b []byte) error {
	if len(w.pending) == 0 {
		w.payload = w.payload[:0]
	}
	w.pending = append(w.pending, placedSpan{p, span{int64(len(w.payload)), len(b)}})
	w.payload = append(w.payload, b...)
	if len(w.pending) == wholeBatch {
		return w.flush()
	}
	return nil
}

// flush adds the record of the changes put since the last.
func (w *snapshot) flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	if err := w.add(w.payload); err != nil {
		return err
	}
	base := w.size + journal.HeaderSize
	for _, p := range w.pending {
		p.sp.off += base
		w.index.add(p.placed, p.sp)
	}
	w.size = base + int64(len(w.payload))
	w.pending = w.pending[:0]
	return nil
}
