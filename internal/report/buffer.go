package report

// Buffers holds downlink frames of sessions whose FAR says BUFF (§5.2.4),
// in arrival order, bounded per session and in total.
type Buffers struct {
	// PerSession is the bound when the BAR suggests none; Total bounds
	// all sessions together.
	PerSession, Total int
	held              int
	queues            map[uint64]*queue
	// Frames not delivered: over a bound, or discarded (DROBU, deletion).
	Overflowed, Discarded uint64
}

type queue struct {
	frames [][]byte
	// notified: a Downlink Data Report went for this buffering period.
	notified bool
}

// NewBuffers bounds each session's buffer by perSession frames, unless its
// BAR says otherwise, and all of them by total.
func NewBuffers(perSession, total int) *Buffers {
	return &Buffers{PerSession: perSession, Total: total, queues: map[uint64]*queue{}}
}

// Hold queues a frame for a session; limit is the BAR's suggested count
// (0: the default). It says whether the frame was kept.
func (b *Buffers) Hold(seid uint64, limit int, frame []byte) bool {
	if limit == 0 {
		limit = b.PerSession
	}
	q := b.queue(seid)
	if len(q.frames) >= limit || b.held >= b.Total {
		b.Overflowed++
		return false
	}
	q.frames = append(q.frames, frame)
	b.held++
	return true
}

// Notify says whether a Downlink Data Report is due for a session: only
// for the first frame of a buffering period (TS 23.501 §5.8.3.2).
func (b *Buffers) Notify(seid uint64) bool {
	q := b.queue(seid)
	first := !q.notified
	q.notified = true
	return first
}

// Take ends a session's buffering period and hands back its frames, in
// the order they came, to send.
func (b *Buffers) Take(seid uint64) [][]byte {
	q, ok := b.queues[seid]
	if !ok {
		return nil
	}
	delete(b.queues, seid)
	b.held -= len(q.frames)
	return q.frames
}

// Discard ends a session's buffering period and drops its frames.
func (b *Buffers) Discard(seid uint64) {
	b.Discarded += uint64(len(b.Take(seid)))
}

// Len is how many frames a session has buffered.
func (b *Buffers) Len(seid uint64) int {
	if q, ok := b.queues[seid]; ok {
		return len(q.frames)
	}
	return 0
}

// Held is how many frames are buffered in all.
func (b *Buffers) Held() int { return b.held }

func (b *Buffers) queue(seid uint64) *queue {
	q, ok := b.queues[seid]
	if !ok {
		q = &queue{}
		b.queues[seid] = q
	}
	return q
}
