package smf

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wmnsk/go-pfcp/message"
)

// op is one session request of a batch and what its acceptance changes.
type op struct {
	sess *Session
	msg  message.Message
	rec  *recorder // where its end counts
	// onAccept records what an accepted answer says; an error makes the
	// request a failure. Nil: nothing to record.
	onAccept func(message.Message) error
}

// check accepts an answer: Request accepted, addressed to our SEID for
// the session, and what onAccept wants.
func (o *op) check(m message.Message) error {
	if err := accepted(o.msg, m, o.sess); err != nil {
		return err
	}
	if m.SEID() != o.sess.CPSEID {
		return o.sess.errorf("%s answered to SEID %#x", m.MessageTypeName(), m.SEID())
	}
	if o.onAccept == nil {
		return nil
	}
	if err := o.onAccept(m); err != nil {
		return o.sess.errorf("%s: %w", m.MessageTypeName(), err)
	}
	return nil
}

// errHalted stops a batch once a request of it went unanswered.
var errHalted = errors.New("a request went unanswered: sending no more")

// batch keeps up to a window of requests in flight. One goroutine drives
// it; the callbacks of its ops run on that goroutine.
type batch struct {
	c      *Client
	window int
	done   chan ending // room for the whole window: the reader never waits
	flying int
	// halted is the first request given up unanswered: the UPF is gone or
	// drowning, and the batch sends no more.
	halted error
}

func (c *Client) newBatch() *batch {
	return &batch{c: c, window: c.cfg.Window, done: make(chan ending, c.cfg.Window)}
}

// send waits for room in the window, then sends o. An error (ctx ended,
// the batch halted, the socket failed) means o was not sent.
func (b *batch) send(ctx context.Context, o *op) error {
	for b.flying >= b.window {
		if err := b.awaitOne(ctx); err != nil {
			return err
		}
	}
	if b.halted != nil {
		return errHalted
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	if err := b.c.start(o.msg, o, b.done); err != nil {
		return o.sess.errorf("%w", err)
	}
	o.rec.sent(now)
	b.flying++
	return nil
}

// awaitOne handles the next request to end.
func (b *batch) awaitOne(ctx context.Context) error {
	select {
	case e := <-b.done:
		b.end(e)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// awaitUntil handles requests as they end until t.
func (b *batch) awaitUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	for {
		select {
		case e := <-b.done:
			b.end(e)
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// drain waits for every request in flight; each ends within N1 T1s, or
// when the client is closed.
func (b *batch) drain() {
	for b.flying > 0 {
		b.end(<-b.done)
	}
}

func (b *batch) end(e ending) {
	b.flying--
	o := e.tx.op
	err := e.err
	if err != nil {
		err = o.sess.errorf("%w", err)
	} else {
		err = o.check(e.msg)
	}
	if errors.Is(err, ErrTimeout) && b.halted == nil {
		b.halted = err
	}
	o.rec.ended(e.tx.first, e.at, err)
}

// run sends one request per session, a window at a time, and waits for
// them all. A phase cut short says how many were not sent, and why.
func (c *Client) run(ctx context.Context, name string, sessions []*Session, request func(*Session) *op) (Phase, error) {
	rec := newRecorder(name)
	b := c.newBatch()
	var stopped error
	for _, s := range sessions {
		o := request(s)
		o.rec = rec
		if stopped = b.send(ctx, o); stopped != nil {
			break
		}
	}
	b.drain()
	phase, err := rec.result()
	if unsent := len(sessions) - phase.Sent; unsent > 0 {
		err = errors.Join(err, fmt.Errorf("%s: %d requests not sent: %w", name, unsent, stopped))
	}
	return phase, err
}
