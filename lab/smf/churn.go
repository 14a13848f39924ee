package smf

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/lab/topo"
)

// Churn is session turnover while traffic runs: every second, PerSecond
// establishments of new sessions, PerSecond path switches of the
// established population (to SwitchTo and back) and PerSecond deletions
// of the sessions the churn established, oldest first. The population it
// found stays; what it adds is gone when it returns.
type Churn struct {
	PerSecond int
	Duration  time.Duration
	SwitchTo  netip.Addr // the second gNB; 198.18.3.11
	// Base is the population it switches, by CP SEID; nil: every
	// established session.
	Base []Session
}

// maxChurn keeps the interval between a second's requests above a microsecond.
const maxChurn = 1_000_000

// ChurnResult is a phase per kind of request. Cleanup deletes what the
// churn established and had not deleted by the end.
type ChurnResult struct {
	Establish, Activate, Switch, Delete, Cleanup Phase
	// Intervals is how many 1/PerSecond intervals the churn ran; Late,
	// how many of them sent their requests more than an interval behind
	// time: the window was full, or the machine busy.
	Intervals, Late int
}

// Phases are the result's phases that sent anything.
func (r ChurnResult) Phases() []Phase {
	var out []Phase
	for _, p := range []Phase{r.Establish, r.Activate, r.Switch, r.Delete, r.Cleanup} {
		if p.Sent > 0 {
			out = append(out, p)
		}
	}
	return out
}

// churner is one churn's state, owned by the goroutine that runs it.
type churner struct {
	c        *Client
	b        *batch
	gnbs     [2]netip.Addr
	base     []*Session              // the population it switches
	target   map[*Session]netip.Addr // where each one's last switch sent it
	created  []*Session              // every session it made
	activate []*Session              // established, to activate
	ready    []*Session              // established (and activated), oldest first: to delete
	rec      struct{ establish, activate, switches, delete *recorder }
}

// Churn runs ch; it is bounded by ch.Duration, the end of what is then in
// flight (N1 T1s at the most) and the cleanup.
func (c *Client) Churn(ctx context.Context, ch Churn) (ChurnResult, error) {
	if ch.PerSecond <= 0 || ch.PerSecond > maxChurn || ch.Duration <= 0 {
		return ChurnResult{}, fmt.Errorf("smf: churn needs a rate from 1 to %d a second and a duration", maxChurn)
	}
	if !ch.SwitchTo.IsValid() {
		ch.SwitchTo = topo.GNB2N3
	}
	c.turn.Lock()
	defer c.turn.Unlock()
	base := c.live()
	if ch.Base != nil {
		base = c.mine(ch.Base)
	}
	r := &churner{c: c, b: c.newBatch(), gnbs: [2]netip.Addr{c.cfg.GNB, ch.SwitchTo},
		base: base, target: map[*Session]netip.Addr{}}
	r.rec.establish, r.rec.activate = newRecorder("churn: establish"), newRecorder("churn: activate")
	r.rec.switches, r.rec.delete = newRecorder("churn: switch"), newRecorder("churn: delete")

	intervals, late, stopped := r.run(ctx, ch)
	res := ChurnResult{Intervals: intervals, Late: late}
	var cleanupErr error
	res.Cleanup, cleanupErr = c.run(context.Background(), "churn: cleanup", r.leftover(), c.deletion)
	var errs [4]error
	res.Establish, errs[0] = r.rec.establish.result()
	res.Activate, errs[1] = r.rec.activate.result()
	res.Switch, errs[2] = r.rec.switches.result()
	res.Delete, errs[3] = r.rec.delete.result()
	return res, errors.Join(stopped, errs[0], errs[1], errs[2], errs[3], cleanupErr)
}

// run sends each interval's requests on time, as the window allows, for
// ch.Duration, then waits for those in flight.
func (r *churner) run(ctx context.Context, ch Churn) (intervals, late int, err error) {
	interval := time.Second / time.Duration(ch.PerSecond)
	ticks := int(ch.Duration / interval)
	start := time.Now()
	for intervals = 0; intervals < ticks; intervals++ {
		due := start.Add(time.Duration(intervals) * interval)
		if err = r.b.awaitUntil(ctx, due); err != nil {
			break
		}
		if time.Since(due) > interval {
			late++
		}
		if err = r.tick(ctx, intervals); err != nil {
			break
		}
	}
	r.b.drain()
	if err == nil && len(r.activate) > 0 {
		// Established in the last interval: activated as the SMF would.
		err = r.activateQueued(ctx)
		r.b.drain()
	}
	return intervals, late, err
}

// tick sends one interval's requests: the activations due, a new
// session, a path switch, a deletion.
func (r *churner) tick(ctx context.Context, i int) error {
	if err := r.activateQueued(ctx); err != nil {
		return err
	}
	if err := r.establishOne(ctx); err != nil {
		return err
	}
	if len(r.base) > 0 {
		if err := r.switchOne(ctx, r.base[i%len(r.base)]); err != nil {
			return err
		}
	}
	if len(r.ready) > 0 {
		s := r.ready[0]
		r.ready = r.ready[1:]
		return r.send(ctx, r.c.deletion(s), r.rec.delete, nil)
	}
	return nil
}

// activateQueued sends the activations of the sessions established since.
func (r *churner) activateQueued(ctx context.Context) error {
	for len(r.activate) > 0 {
		s := r.activate[0]
		r.activate = r.activate[1:]
		if err := r.send(ctx, r.c.activation(s), r.rec.activate, r.readied(s)); err != nil {
			return err
		}
	}
	return nil
}

func (r *churner) establishOne(ctx context.Context) error {
	fresh, err := r.c.newSessions(1)
	if err != nil {
		return err
	}
	s := fresh[0]
	then := r.readied(s)
	if r.c.flow.activates() {
		then = func() { r.activate = append(r.activate, s) }
	}
	if err := r.send(ctx, r.c.establishment(s), r.rec.establish, then); err != nil {
		r.c.releaseUnestablished(fresh) // not sent
		return err
	}
	r.created = append(r.created, s)
	return nil
}

// switchOne sends s to the gNB it was not last sent to.
func (r *churner) switchOne(ctx context.Context, s *Session) error {
	last, ok := r.target[s]
	if !ok {
		last = s.GNB
	}
	to := r.gnbs[1]
	if last == r.gnbs[1] {
		to = r.gnbs[0]
	}
	r.target[s] = to
	return r.send(ctx, r.c.pathSwitch(to)(s), r.rec.switches, nil)
}

// readied queues s for deletion once accepted.
func (r *churner) readied(s *Session) func() {
	return func() { r.ready = append(r.ready, s) }
}

// send sends o, counted in rec, and runs then if it is accepted.
func (r *churner) send(ctx context.Context, o *op, rec *recorder, then func()) error {
	o.rec = rec
	if then != nil {
		check := o.onAccept
		o.onAccept = func(m message.Message) error {
			if check != nil {
				if err := check(m); err != nil {
					return err
				}
			}
			then()
			return nil
		}
	}
	return r.b.send(ctx, o)
}

// leftover are the sessions the churn established and did not delete;
// the slots of those the UPF refused go back.
func (r *churner) leftover() []*Session {
	r.c.releaseUnestablished(r.created)
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	var out []*Session
	for _, s := range r.created {
		if r.c.sessions[s.CPSEID] == s {
			out = append(out, s)
		}
	}
	return out
}
