package pfcp

import (
	"bufio"
	"cmp"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/sluice-upf/sluice/internal/journal"
	"github.com/sluice-upf/sluice/internal/saved"
)

// The writer goroutine knows where each entity's last change lies in the
// journal, so that it compacts the journal by copying those changes into
// a new file: nothing is encoded again, and nothing is asked of the serve
// loop, which goes on serving. Only a journal that failed (behind) needs
// the whole state from the serve loop.

// span is where an entity's last change lies in the journal: its
// encoding, n bytes at off. A response's also says when it expires, Unix
// ns: a compaction after that leaves it out.
type span struct {
	off     int64
	n       int
	expires int64
}

// wholeBatch is the changes a record of the whole state holds.
const wholeBatch = 1024

// track keeps where a change written at off lies.
func (k *keeper) track(c change, off int64, n int) {
	switch c.Kind {
	case kindClosed:
		return
	case kindForget:
		for key := range k.live {
			if key.kind == kindResponse && forgotten(key.key, c.Key) {
				delete(k.live, key)
			}
		}
		return
	}
	key := entityKey{c.Kind, c.Key}
	if was, ok := k.live[key]; ok {
		k.liveBytes -= was.live()
		delete(k.live, key)
	}
	if c.Val != nil {
		sp := span{off: off, n: n, expires: expiresOf(c)}
		k.live[key] = sp
		k.liveBytes += sp.live()
	}
}

// live is what the span adds to the state the journal stands for: a
// response, gone in 30 s, adds nothing.
func (sp span) live() int64 {
	if sp.expires != 0 {
		return 0
	}
	return int64(sp.n)
}

func expiresOf(c change) int64 {
	if r, ok := c.Val.(savedResponse); ok {
		return r.Expires.UnixNano()
	}
	return 0
}

// compactIfDue rewrites the journal once it holds compactRatio times the
// state it stands for.
func (k *keeper) compactIfDue(now time.Time, log *slog.Logger) {
	if k.behind || k.j.Size() < max(minCompact, compactRatio*max(k.liveBytes, k.wholeSize)) {
		return
	}
	if k.rewrite(k.copyLive(now), log) == nil {
		k.stats.size.Store(k.j.Size())
	}
}

// copyLive puts each entity's last change, read from the journal in the
// order it lies there; responses expired by now are left out.
func (k *keeper) copyLive(now time.Time) func(*snapshot) error {
	return func(w *snapshot) error {
		all := make([]entitySpan, 0, len(k.live))
		for key, sp := range k.live {
			if sp.expires == 0 || sp.expires > now.UnixNano() {
				all = append(all, entitySpan{key, sp})
			}
		}
		slices.SortFunc(all, func(a, b entitySpan) int { return cmp.Compare(a.sp.off, b.sp.off) })
		r := bufio.NewReaderSize(io.NewSectionReader(k.j, 0, k.j.Size()), 1<<20)
		var at int64
		var b []byte
		for _, p := range all {
			if _, err := r.Discard(int(p.sp.off - at)); err != nil {
				return err
			}
			b = slices.Grow(b[:0], p.sp.n)[:p.sp.n]
			if _, err := io.ReadFull(r, b); err != nil {
				return err
			}
			at = p.sp.off + int64(p.sp.n)
			if err := w.put(p.key, p.sp.expires, b); err != nil {
				return err
			}
		}
		return nil
	}
}

// changesOf puts the whole state as the serve loop handed it on.
func (k *keeper) changesOf(cs []change) func(*snapshot) error {
	return func(w *snapshot) error {
		var b []byte
		for _, c := range cs {
			b = saved.Append(b[:0], c)
			if err := w.put(entityKey{c.Kind, c.Key}, expiresOf(c), b); err != nil {
				return err
			}
		}
		return nil
	}
}

// snapshot writes the whole state into a journal.Rewrite, wholeBatch
// changes a record, and keeps where each lies in the new file.
type snapshot struct {
	add       func([]byte) error
	size      int64 // of the new file so far
	payload   []byte
	pending   []entitySpan // the changes in payload, where they lie in it
	live      map[entityKey]span
	liveBytes int64
}

type entitySpan struct {
	key entityKey
	sp  span
}

// put adds one change, its encoding in b (copied).
func (w *snapshot) put(key entityKey, expires int64, b []byte) error {
	if len(w.pending) == 0 {
		w.payload = w.payload[:0]
	}
	w.pending = append(w.pending, entitySpan{key, span{int64(len(w.payload)), len(b), expires}})
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
		w.live[p.key] = p.sp
		w.liveBytes += p.sp.live()
	}
	w.size = base + int64(len(w.payload))
	w.pending = w.pending[:0]
	return nil
}
