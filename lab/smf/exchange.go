package smf

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wmnsk/go-pfcp/message"
)

// A transaction is one request of ours until it ends: answered, or given
// up after N1 sends T1 apart (TS 29.244 §6.4).
type transaction struct {
	seq    uint32
	answer uint8  // the message type that answers it
	name   string // the request's message type, for errors
	wire   []byte // what is sent, again unchanged on retransmission
	first  time.Time
	due    time.Time // when it is sent again if still unanswered
	sends  int
	done   chan<- ending // never blocks: sized for every transaction that ends on it
	op     *op           // what a batch does with the answer; nil for a lone request
}

// ending is how a transaction ended: an answer, or an error.
type ending struct {
	tx  *transaction
	msg message.Message
	err error
	at  time.Time
}

// inflight holds our unanswered requests by sequence number. Whoever takes
// a transaction out (the reader with its answer, the timer giving up,
// Close) ends it: each transaction ends exactly once.
type inflight struct {
	mu    sync.Mutex
	bySeq map[uint32]*transaction
}

func (f *inflight) add(tx *transaction) {
	f.mu.Lock()
	f.bySeq[tx.seq] = tx
	f.mu.Unlock()
}

// take removes the transaction seq if it is there.
func (f *inflight) take(seq uint32) *transaction {
	f.mu.Lock()
	defer f.mu.Unlock()
	tx := f.bySeq[seq]
	delete(f.bySeq, seq)
	return tx
}

// takeAnswered removes the transaction that m answers: same sequence
// number, and the response type of its request.
func (f *inflight) takeAnswered(m message.Message) *transaction {
	f.mu.Lock()
	defer f.mu.Unlock()
	tx := f.bySeq[m.Sequence()]
	if tx == nil || tx.answer != m.MessageType() {
		return nil
	}
	delete(f.bySeq, tx.seq)
	return tx
}

// due returns the transactions to send again at now, counting the send,
// and takes out those that have had their N1 sends.
func (f *inflight) due(now time.Time, t1 time.Duration, n1 int) (again, expired []*transaction) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for seq, tx := range f.bySeq {
		if now.Before(tx.due) {
			continue
		}
		if tx.sends >= n1 {
			delete(f.bySeq, seq)
			expired = append(expired, tx)
			continue
		}
		tx.sends++
		tx.due = now.Add(t1)
		again = append(again, tx)
	}
	return again, expired
}

// failAll ends every transaction with err.
func (f *inflight) failAll(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for seq, tx := range f.bySeq {
		delete(f.bySeq, seq)
		tx.done <- ending{tx: tx, err: err, at: time.Now()}
	}
}

// start sends m as a new transaction that ends on done. An error means it
// never started and will not end on done.
func (c *Client) start(m message.Message, o *op, done chan<- ending) error {
	seq := c.seq.Add(1) & 0xffffff // 24 bits (§7.2.2.1)
	m.SetSequenceNumber(seq)
	wire := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(wire); err != nil {
		return fmt.Errorf("encode %s: %w", m.MessageTypeName(), err)
	}
	now := time.Now()
	tx := &transaction{seq: seq, answer: m.MessageType() + 1, name: m.MessageTypeName(), wire: wire,
		first: now, due: now.Add(c.cfg.T1), sends: 1, done: done, op: o}
	c.pending.add(tx)
	if _, err := c.conn.WriteToUDPAddrPort(wire, c.cfg.UPF); err != nil && c.pending.take(seq) == tx {
		return fmt.Errorf("send %s: %w", tx.name, err)
	}
	return nil
}

// ask sends one request and waits for its answer.
func (c *Client) ask(ctx context.Context, m message.Message) (message.Message, error) {
	done := make(chan ending, 1)
	if err := c.start(m, nil, done); err != nil {
		return nil, err
	}
	select {
	case e := <-done:
		return e.msg, e.err
	case <-ctx.Done():
		if c.pending.take(m.Sequence()) == nil {
			e := <-done // it ended meanwhile
			return e.msg, e.err
		}
		return nil, ctx.Err()
	}
}

// retransmit sends unanswered requests again every T1 and gives them up
// after N1 sends, until Close.
func (c *Client) retransmit() {
	defer c.wg.Done()
	tick := time.NewTicker(max(c.cfg.T1/8, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-c.life.Done():
			return
		case now := <-tick.C:
			again, expired := c.pending.due(now, c.cfg.T1, c.cfg.N1)
			for _, tx := range again {
				c.conn.WriteToUDPAddrPort(tx.wire, c.cfg.UPF) // a lost send is what T1 is for
			}
			for _, tx := range expired {
				tx.done <- ending{tx: tx, at: now,
					err: fmt.Errorf("%s (sequence %d): %w after %d sends %v apart", tx.name, tx.seq, ErrTimeout, tx.sends, c.cfg.T1)}
			}
		}
	}
}
