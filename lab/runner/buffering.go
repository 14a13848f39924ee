package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
)

// bufferingKind checks downlink buffering (TS 29.244 §5.2.4.2): a session
// whose downlink FAR buffers and notifies the control plane (BUFF|NOCP),
// with a BAR that suggests a bound, is sent numbered datagrams from the DN
// host (dlProbe); the SMF emulator counts the Downlink Data Reports, then
// makes the FAR forward, and the gNB's socket sees what was buffered come
// out, and the datagrams sent after the Modification Response behind it.
// A second round sends past the bound.
type bufferingKind struct{}

func (bufferingKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	x := st.Settings.(*scenario.Buffering)
	probe, err := newDLProbe(r.lab)
	if err != nil {
		return err
	}
	defer probe.close()
	var mu sync.Mutex
	dldrs := map[uint64]int{}
	r.smf.OnReport(func(rep smf.Report) {
		if rep.DownlinkData {
			mu.Lock()
			dldrs[rep.CPSEID]++
			mu.Unlock()
		}
	})
	defer r.smf.OnReport(nil)
	reports := func(s smf.Session) int {
		mu.Lock()
		defer mu.Unlock()
		return dldrs[s.CPSEID]
	}
	rounds := []int{x.Frames}
	if x.Overflow > 0 {
		rounds = append(rounds, x.Bound+x.Overflow)
	}
	var checks []report.Check
	for _, sent := range rounds {
		c, err := bufferRound(ctx, r, probe, x, sent, reports)
		checks = append(checks, c...)
		if err != nil {
			r.run.AddChecks(st.Header(), checks...)
			return err
		}
		probe.forget()
	}
	r.run.AddChecks(st.Header(), checks...)
	return nil
}

// bufferRound buffers sent datagrams in a session of its own, forwards,
// sends x.After more, and judges what came.
func bufferRound(ctx context.Context, r *runner, probe *dlProbe, x *scenario.Buffering, sent int,
	reports func(smf.Session) int) ([]report.Check, error) {
	of := fmt.Sprintf(", %d buffered", sent)
	names := []string{"Downlink Data Reports" + of, "frames forwarded while buffering" + of,
		"frames lost within the bound" + of, "frames out of order after forwarding" + of}
	refusedAll := func(cause string) []report.Check {
		var out []report.Check
		for _, n := range names {
			out = append(out, report.RefusedCheck(n, cause))
		}
		return out
	}
	s, cause, err := r.checkSession(ctx, smf.Rules{Buffer: true, BufferCount: uint8(x.Bound)})
	if err != nil || cause != "" {
		return refusedAll(cause), err
	}
	limit := x.Hold + time.Duration(sent+x.After)*x.Interval + 10*time.Second
	buffered := probe.start(s.UE, x.Interval, limit, uint64(sent))
	if _, err := buffered.finish(); err != nil {
		return nil, errors.Join(err, r.dropSessions(ctx, s))
	}
	sleep(ctx, x.Hold)
	early := len(probe.arrivals(s.DownlinkTEID, buffered.burst))
	_, err = r.smf.Forward(ctx, []smf.Session{s})
	var refused *smf.CauseError
	if errors.As(err, &refused) {
		return refusedAll(fmt.Sprintf("forward: cause %d (%s)", refused.Cause, smf.CauseName(refused.Cause))), r.dropSessions(ctx, s)
	}
	if err != nil {
		return nil, errors.Join(err, r.dropSessions(ctx, s))
	}
	after := probe.start(s.UE, x.Interval, limit, uint64(x.After))
	afterSent, err := after.finish()
	if err != nil {
		return nil, errors.Join(err, r.dropSessions(ctx, s))
	}
	sleep(ctx, drain)
	n := reports(s)
	got := probe.arrivals(s.DownlinkTEID, buffered.burst, after.burst)
	if err := r.dropSessions(ctx, s); err != nil {
		return nil, err
	}
	t := tallyFlush(got, buffered.burst, min(sent, x.Bound))
	note := fmt.Sprintf("%d sent while buffering, a bound of %d: %d came out; then %d sent, %d came", sent, x.Bound, t.buffered, afterSent, t.after)
	return []report.Check{
		report.Between(names[0], float64(n), 1, 1, "").With(fmt.Sprintf("over %s of buffering", x.Hold)),
		report.AtMost(names[1], float64(early), 0, "frames"),
		report.AtMost(names[2], float64(t.lostWithin), 0, "frames").With(note),
		report.AtMost(names[3], float64(t.reordered), 0, "frames").With("buffered in sequence, then those sent after the Modification Response"),
	}, nil
}

// flushTally is what came of a buffered burst and the one sent after.
type flushTally struct {
	buffered, after       int // of each burst, arrived (once each)
	lostWithin, reordered int
}

// tallyFlush reads the arrivals of the buffered burst and the one after:
// within is how many of the buffered must come (the bound, or fewer if
// fewer were sent); each must come in sequence, and all before any sent
// after.
func tallyFlush(got []arrival, bufferedBurst uint32, within int) flushTally {
	var t flushTally
	seen := map[[2]uint64]bool{}
	var next uint64
	afterBegan := false
	for _, a := range got {
		if a.endMarker || seen[[2]uint64{uint64(a.burst), a.seq}] {
			continue
		}
		seen[[2]uint64{uint64(a.burst), a.seq}] = true
		if a.burst != bufferedBurst {
			t.after++
			afterBegan = true
			continue
		}
		t.buffered++
		if afterBegan || a.seq < next {
			t.reordered++
		} else {
			next = a.seq + 1
		}
	}
	t.lostWithin = max(within-t.buffered, 0)
	return t
}
