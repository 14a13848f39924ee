package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/tgen"
)

// steady is traffic at a fixed rate each way through the run's sessions
// while a check does something else (overload, abuse): the sinks count
// what it lost meanwhile.
type steady struct {
	flights []*flight
	results []tgen.Result
	errs    []error
	before  []uint64 // the UPF's egress refusals at the start, by flight
	cancel  context.CancelFunc
	done    chan struct{}
}

// startSteady sends pps each way, from a core each, until stop or limit.
func (r *runner) startSteady(ctx context.Context, pps float64, size int, limit time.Duration) (*steady, error) {
	m := newMeasurer(r.lab, 0)
	s := &steady{done: make(chan struct{})}
	for _, dir := range scenario.Both.Each() {
		f, err := m.prepare(newLoad(dir, scenario.Size{Bytes: size}, scenario.Rate{PPS: pps}, limit, r.sessions, r.s.Sessions.Flows, tgen.UPF))
		if err != nil {
			s.close()
			return nil, err
		}
		refused, _ := tgen.XmitErrors(f.upfNS, f.l.egress())
		s.flights, s.before = append(s.flights, f), append(s.before, refused)
	}
	s.results, s.errs = make([]tgen.Result, len(s.flights)), make([]error, len(s.flights))
	runCtx, cancel := context.WithTimeout(ctx, limit)
	s.cancel = cancel
	go func() {
		defer close(s.done)
		errs := make(chan struct{}, len(s.flights))
		for i, f := range s.flights {
			cpus := share(m.cpus, i, len(s.flights))[:1]
			go func() {
				s.results[i], s.errs[i] = f.gen.Run(runCtx, tgen.RunOptions{Namespace: f.ns, Device: f.dev, CPUs: cpus, Rate: uint64(pps)})
				errs <- struct{}{}
			}()
		}
		for range s.flights {
			<-errs
		}
	}()
	return s, nil
}

// flowing waits until every direction's sink has counted frames, and then
// lead more: what the check does next happens under traffic.
func (s *steady) flowing(ctx context.Context, lead time.Duration) error {
	for _, f := range s.flights {
		if err := awaitSink(f, 1, 3*time.Second); err != nil {
			return err
		}
		if st, _ := f.sink.Stats(nil); st.Packets == 0 {
			return fmt.Errorf("no %s frame arrived within 3s of starting the traffic", f.l.dir)
		}
	}
	sleep(ctx, lead)
	return nil
}

// steadyResult is what one direction of steady traffic lost.
type steadyResult struct {
	dir                   scenario.Direction
	sent, lost, refused   uint64
	lossPct               float64
	p99                   time.Duration
	latencyCount, invalid uint64
}

// note says what the loss is made of.
func (x steadyResult) note() string {
	text := fmt.Sprintf("%d sent, %d lost", x.sent, x.lost)
	if x.refused > 0 {
		text += fmt.Sprintf(", of which the lab's veths refused %d", x.refused)
	}
	return text
}

// stop ends the traffic, lets it arrive, and gives each direction's count.
func (s *steady) stop() ([]steadyResult, error) {
	s.cancel()
	<-s.done
	time.Sleep(drain)
	defer s.close()
	var out []steadyResult
	for i, f := range s.flights {
		if s.errs[i] != nil {
			return nil, s.errs[i]
		}
		sent, err := f.gen.Sent()
		if err != nil {
			return nil, err
		}
		st, err := f.sink.Stats(sent)
		if err != nil {
			return nil, err
		}
		x := steadyResult{dir: f.l.dir, sent: st.Lost + st.Unique, lost: st.Lost, p99: st.Latency.P99, latencyCount: st.Latency.Count,
			refused: s.results[i].NotTaken}
		if after, err := tgen.XmitErrors(f.upfNS, f.l.egress()); err == nil && after >= s.before[i] {
			x.refused += after - s.before[i]
		}
		for _, n := range st.Invalid {
			x.invalid += n
		}
		if x.sent > 0 {
			x.lossPct = 100 * float64(x.lost) / float64(x.sent)
		}
		out = append(out, x)
	}
	return out, nil
}

func (s *steady) close() {
	for _, f := range s.flights {
		f.close()
	}
	if s.cancel != nil {
		s.cancel()
	}
}

// besideTraffic runs do while steady traffic at pps flows each way
// through the run's sessions, from steadyLead before it to steadyLead
// after, for limit at most, and gives what the traffic lost.
func (r *runner) besideTraffic(ctx context.Context, pps float64, limit time.Duration, do func()) ([]steadyResult, error) {
	traffic, err := r.startSteady(ctx, pps, steadyPayload, limit)
	if err != nil {
		return nil, err
	}
	if err := traffic.flowing(ctx, steadyLead); err != nil {
		traffic.close()
		return nil, err
	}
	do()
	sleep(ctx, steadyLead)
	return traffic.stop()
}

// steadyPayload is small: the checks under traffic are of rules and
// sessions, not of bandwidth. The traffic runs steadyLead before and
// after what the check does.
const (
	steadyPayload = 64
	steadyLead    = 200 * time.Millisecond
)

// lossChecks are the frames the steady traffic lost, a line each way;
// whose says whose traffic it was.
func lossChecks(whose string, lost []steadyResult) []report.Check {
	var out []report.Check
	for _, x := range lost {
		out = append(out, report.AtMost("frames lost meanwhile by "+whose+", "+string(x.dir), float64(x.lost), 0, "frames").With(x.note()))
	}
	return out
}
