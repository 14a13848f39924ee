package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sluice-upf/sluice/lab/runner"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/tgen"
	"github.com/sluice-upf/sluice/lab/topo"
)

func init() {
	register("sink", "count what arrives through the UPF: loss, duplicates, reordering, one-way latency", runSink)
}

// sinkRun is what `upflab sink` was asked to do.
type sinkRun struct {
	name     string
	t        runner.Traffic
	path     tgen.Path
	duration time.Duration
	expect   uint64
	idle     time.Duration
	interval time.Duration
	perFlow  bool
}

// shownFlows is how many flows get a line of their own unless --per-flow.
const shownFlows = 16

func runSink(args []string) error {
	s, err := parseSink(args)
	if err != nil {
		return err
	}
	return inLab(s.name, s.run)
}

// run counts until ctx ends, the time is up or all expected have come,
// and prints what it counted.
func (s sinkRun) run(ctx context.Context, lab topo.Lab) error {
	c, err := s.attach(lab)
	if err != nil {
		return err
	}
	defer c.Close()
	c.wait(ctx, os.Stdout)
	return c.report(os.Stdout)
}

func parseSink(args []string) (sinkRun, error) {
	fs := flags("sink", "[flags]")
	var tf trafficFlags
	tf.register(fs)
	s := sinkRun{duration: time.Hour}
	fs.Func("through", throughHelp, throughFlag(&s.path))
	fs.Func("duration", "count for `DURATION` at the most, e.g. 30s (default 1h); Ctrl-C ends sooner", durationFlag(&s.duration))
	fs.Uint64Var(&s.expect, "expect", 0, "`N` frames the generator sent, as upflab gen prints it: loss is counted against it, and the sink ends once all have arrived")
	fs.DurationVar(&s.idle, "idle", 0, "end once nothing has come for this long, after the first frame, e.g. 2s (0: never; ocbr's timeout)")
	fs.DurationVar(&s.interval, "interval", 0, "print what arrived so far this often, e.g. 1s (0: only at the end)")
	fs.BoolVar(&s.perFlow, "per-flow", false, fmt.Sprintf("a line for every flow (default: every flow up to %d, else those that lost, doubled or reordered)", shownFlows))
	if err := parseAll(fs, args); err != nil {
		return s, err
	}
	s.name = tf.name
	if s.interval < 0 || s.idle < 0 {
		return s, fmt.Errorf("%w: --interval and --idle: want 0 or more", errUsage)
	}
	// The sink checks no length against the spec: any size will do.
	var err error
	s.t, err = tf.traffic(fs, []scenario.Weighted{{Bytes: scenario.MinPayload, Weight: 1}})
	return s, err
}

const throughHelp = "`WHAT` stands between generator and sink: upf (the UPF under test, the default), or reference " +
	"(the reference forwarder, which this command puts in the UPF's namespace for its run)"

// throughFlag reads --through: what the frames cross, and so how they
// arrive.
func throughFlag(p *tgen.Path) func(string) error {
	return func(s string) error {
		switch s {
		case "upf":
			*p = tgen.UPF
		case "reference", "ref":
			*p = tgen.Wire
		default:
			return errors.New("want upf or reference")
		}
		return nil
	}
}

// pathText names what stands between generator and sink.
func pathText(p tgen.Path) string {
	if p == tgen.Wire {
		return "the reference forwarder"
	}
	return "the UPF"
}

// counting is a sink attached, with the reference forwarder it attached
// if any.
type counting struct {
	s       sinkRun
	sink    *tgen.Sink
	ref     io.Closer
	ns, dev string
	start   time.Time
}

// attach puts the sink on the receiving end of the traffic (the DN's n6
// uplink, the gNB's n3 downlink), and the reference forwarder in the UPF's
// namespace if the frames go through it.
func (s sinkRun) attach(lab topo.Lab) (*counting, error) {
	sink, err := tgen.NewSink(s.t.Spec(), s.path)
	if err != nil {
		return nil, err
	}
	c := &counting{s: s, sink: sink}
	_, _, c.ns, c.dev = s.t.Ends(lab)
	if s.path == tgen.Wire {
		if c.ref, err = runner.AttachReference(lab); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := sink.Attach(c.ns, c.dev); err != nil {
		c.Close()
		return nil, fmt.Errorf("%w: is another sink there? `upflab topo show --name %s` lists the XDP programs", err, lab.Name)
	}
	c.start = time.Now()
	return c, nil
}

// Close detaches the sink and the reference forwarder.
func (c *counting) Close() error {
	err := c.sink.Close()
	if c.ref != nil {
		err = errors.Join(err, c.ref.Close())
	}
	return err
}

// wait counts until ctx ends, the duration is up, every frame expected
// has arrived or none has for --idle; every interval it says how far it
// is.
func (c *counting) wait(ctx context.Context, w io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, c.s.duration)
	defer cancel()
	fmt.Fprintf(w, "upflab sink: counting %s through %s on %s/%s: %s; Ctrl-C ends, or %v\n",
		c.s.t.Direction, pathText(c.s.path), c.ns, c.dev, sessionsText(c.s.t), c.s.duration)
	poll, every := c.ticker(c.pollEvery()), c.ticker(c.s.interval)
	defer poll.Stop()
	defer every.Stop()
	var last tgen.Stats
	var seen uint64 // valid frames at the last poll
	lastAt, seenAt := c.start, c.start
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-every.C:
			if st, err := c.sink.Stats(nil); err == nil {
				c.progress(w, st, last, now.Sub(lastAt))
				last, lastAt = st, now
			}
		case now := <-poll.C:
			st, err := c.sink.Stats(nil)
			if err != nil {
				continue
			}
			if st.Packets != seen {
				seen, seenAt = st.Packets, now
			}
			if c.s.expect > 0 && st.Unique >= c.s.expect || c.s.idle > 0 && st.Packets > 0 && now.Sub(seenAt) >= c.s.idle {
				return
			}
		}
	}
}

// ticker ticks every d; never if d is 0.
func (c *counting) ticker(d time.Duration) *time.Ticker {
	if d <= 0 {
		t := time.NewTicker(time.Hour)
		t.Stop()
		return t
	}
	return time.NewTicker(d)
}

// pollEvery is how often the sink is read for --expect and --idle (0:
// never): reading copies every flow's counters, which takes the cores the
// traffic needs.
func (c *counting) pollEvery() time.Duration {
	switch {
	case c.s.expect == 0 && c.s.idle == 0:
		return 0
	case len(c.s.t.Sessions)*max(c.s.t.Flows, 1) > 10_000:
		return time.Second
	}
	return 50 * time.Millisecond
}

// progress is a line of what arrived since the last.
func (c *counting) progress(w io.Writer, st, last tgen.Stats, since time.Duration) {
	_, rx := c.s.t.FrameOverhead(c.s.path)
	packets := st.Packets - last.Packets
	bytes := st.Bytes - last.Bytes + packets*uint64(rx)
	secs := since.Seconds()
	fmt.Fprintf(w, "%8.3f s: %d received (%s, %s), %d lost, %d duplicates, %d reordered\n",
		time.Since(c.start).Seconds(), st.Unique, si(perSecond(packets, secs), "pps"), si(8*perSecond(bytes, secs), "bps"),
		st.Lost, st.Duplicates, st.Reordered)
}

// report prints what the sink counted, as ping sums up: the flows, the
// totals, the latency, and what it refused.
//
// Loss is counted per flow against the highest sequence number seen in
// it: a flow's frames lost after the last that arrived are not seen
// there. --expect, the generator's count, makes the total exact.
func (c *counting) report(w io.Writer) error {
	st, err := c.sink.Stats(nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n--- %s on %s/%s statistics ---\n", c.s.t.Direction, c.ns, c.dev)
	if err := c.flowTable(w, st); err != nil {
		return err
	}
	expected, basis := st.Unique+st.Lost, "by the sequence numbers"
	if c.s.expect > 0 {
		expected, basis = c.s.expect, "as --expect says"
	}
	lost := expected - min(st.Unique, expected)
	fmt.Fprintf(w, "%d frames expected (%s), %d received, %s%% loss, %d duplicates, %d reordered (%d late), time %.0f ms\n",
		expected, basis, st.Unique, lossPercent(lost, expected), st.Duplicates, st.Reordered, st.Late,
		float64(time.Since(c.start))/float64(time.Millisecond))
	if lost > st.Lost {
		fmt.Fprintf(w, "%d of the lost frames came after the last frame that arrived of their flow: seen only in the total\n", lost-st.Lost)
	}
	if l := st.Latency; l.Count > 0 {
		fmt.Fprintf(w, "latency min/avg/max = %s/%s/%s us, p50/p99/p99.9 = %s/%s/%s us (one way, %d frames timed)\n",
			us(l.Min), us(l.Mean), us(l.Max), us(l.P50), us(l.P99), us(l.P999), l.Count)
	}
	if len(st.Invalid) > 0 {
		fmt.Fprintf(w, "invalid: %s\n", invalidText(st.Invalid))
	}
	if st.Passed > 0 {
		fmt.Fprintf(w, "%d frames without the generator's stamp passed to the stack\n", st.Passed)
	}
	return c.nothingArrived(st)
}

// flowTable gives flows a line each: all of them if asked or few, else
// those that lost, doubled or reordered frames.
func (c *counting) flowTable(w io.Writer, st tgen.Stats) error {
	shown := c.flowsToShow(st.Flows)
	if len(shown) > 0 {
		sessions := c.s.t.Sessions
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "FLOW\tUE:PORT\tRECEIVED\tLOST\tDUPLICATES\tREORDERED\tLATE")
		for _, f := range shown {
			fs := st.Flows[f]
			fmt.Fprintf(tw, "%d\t%v:%d\t%d\t%d\t%d\t%d\t%d\n", f, sessions[f%len(sessions)].UE, tgen.UEPort+f/len(sessions),
				fs.Unique, fs.Lost, fs.Duplicates, fs.Reordered, fs.Late)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	switch hidden := len(st.Flows) - len(shown); {
	case hidden > 0 && len(shown) == 0:
		fmt.Fprintf(w, "(%d flows, none of which lost, doubled or reordered a frame: --per-flow lists them)\n", hidden)
	case hidden > 0:
		fmt.Fprintf(w, "(%d more flows not shown: --per-flow lists every flow)\n", hidden)
	}
	return nil
}

func (c *counting) flowsToShow(flows []tgen.FlowStats) []int {
	all := c.s.perFlow || len(flows) <= shownFlows
	var shown []int
	for f, fs := range flows {
		troubled := fs.Lost+fs.Duplicates+fs.Reordered > 0
		if all || troubled && len(shown) < shownFlows {
			shown = append(shown, f)
		}
	}
	return shown
}

// nothingArrived is an error that says what to look at when no valid
// frame came.
func (c *counting) nothingArrived(st tgen.Stats) error {
	switch {
	case st.Packets > 0:
		return nil
	case len(st.Invalid) > 0:
		return errors.New("every frame that came was invalid: give the sink the sessions the UPF has (--sessions-file, or --sessions, --ue, --teid-dl, --qfi as upflab gen got them)")
	}
	return errors.New("nothing arrived: run `upflab gen` with the same --direction, sessions and --flows while the sink counts, through a UPF that has the sessions")
}

func invalidText(invalid map[tgen.Reason]uint64) string {
	reasons := make([]tgen.Reason, 0, len(invalid))
	for r := range invalid {
		reasons = append(reasons, r)
	}
	slices.Sort(reasons)
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d bad %s", invalid[r], r)
	}
	return strings.Join(parts, ", ")
}

// lossPercent writes a loss as ping does: 0, 0.0123, 12.5.
func lossPercent(lost, expected uint64) string {
	if expected == 0 {
		return "0"
	}
	return fmt.Sprintf("%.4g", 100*float64(lost)/float64(expected))
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Microsecond)) }
