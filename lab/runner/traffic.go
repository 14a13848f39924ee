package runner

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/sluice-upf/sluice/lab/cpu"
	"github.com/sluice-upf/sluice/lab/pkt"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/tgen"
	"github.com/sluice-upf/sluice/lab/topo"
)

// Header bytes around a payload, to turn the generator's and the sink's
// inner IP bytes into Ethernet frames (report.Measurement counts frames).
const (
	innerHeaders = pkt.IPv4Len + pkt.UDPLen               // before the payload
	ethernet     = pkt.EthLen                             // what every frame adds
	tunnel       = pkt.IPv4Len + pkt.UDPLen + pkt.GTPULen // outer IPv4, UDP, GTP-U with its PDU Session Container
	drain        = 200 * time.Millisecond
)

// load is one run of traffic: a direction, a mix of payload sizes, a
// rate, a time.
type load struct {
	dir      scenario.Direction
	mix      []scenario.Weighted // payload bytes and shares
	sizeText string              // for the report: "64", "imix", "model"
	pps      float64             // offered in all, 0: flat out
	duration time.Duration
	sessions []tgen.Session
	flows    int
	path     tgen.Path // what stands between generator and sink
	cores    scenario.Cores
}

func newLoad(dir scenario.Direction, size scenario.Size, rate scenario.Rate, d time.Duration, sessions []tgen.Session, flows int, path tgen.Path) load {
	l := load{dir: dir, mix: size.Mix(), sizeText: size.String(), duration: d, sessions: sessions, flows: flows, path: path}
	l.pps = l.offered(rate)
	return l
}

// offered is the packets per second of a rate for this load's frames.
func (l load) offered(r scenario.Rate) float64 {
	var bytes, packets float64
	for _, w := range l.mix {
		bytes += float64(w.Bytes * w.Weight)
		packets += float64(w.Weight)
	}
	frame := bytes/packets + innerHeaders + ethernet
	if l.dir == scenario.Uplink {
		frame += tunnel
	}
	return r.PacketsPerSecond(frame)
}

// ends of each direction: where the generator sends from and the sink
// listens, in which namespace.
func (l load) ends(lab topo.Lab) (genNS, genDev, sinkNS, sinkDev string) {
	if l.dir == scenario.Uplink {
		return lab.GNB, topo.DevN3, lab.DN, topo.DevN6
	}
	return lab.DN, topo.DevN6, lab.GNB, topo.DevN3
}

// egress is the UPF's device toward the sink: the sink listens on its peer.
func (l load) egress() string {
	if l.dir == scenario.Uplink {
		return topo.DevN6
	}
	return topo.DevN3
}

func (l load) spec() tgen.Spec {
	s := tgen.Spec{Sessions: l.sessions, Flows: l.flows, GNB: topo.GNBN3, UPF: topo.UPFN3, DN: topo.DNHost}
	if l.dir == scenario.Uplink {
		s.Direction, s.SrcMAC, s.DstMAC = tgen.Uplink, topo.MACGNBN3, topo.MACUPFN3
	} else {
		s.Direction, s.SrcMAC, s.DstMAC = tgen.Downlink, topo.MACDNN6, topo.MACUPFN6
	}
	for _, w := range l.mix {
		s.Mix = append(s.Mix, tgen.Weighted{Size: w.Bytes + innerHeaders, Weight: w.Weight})
	}
	return s
}

// frameOverhead is what a frame adds to its inner IP packet, as sent (tx)
// and as received (rx): a G-PDU where the direction has a tunnel on that
// side, and a UPF between them removes or adds it.
func (l load) frameOverhead() (tx, rx int) {
	tx, rx = ethernet, ethernet
	if l.dir == scenario.Uplink {
		tx += tunnel
	}
	switch {
	case l.path == tgen.Wire:
		rx = tx
	case l.dir == scenario.Downlink:
		rx += tunnel
	}
	return tx, rx
}

// measurer runs loads in one lab; upfPID (0 for the reference forwarder)
// is whose CPU time counts.
type measurer struct {
	lab    topo.Lab
	upfPID int
	cpus   []int // one generator worker on each
}

func newMeasurer(lab topo.Lab, upfPID int) *measurer {
	m := &measurer{lab: lab, upfPID: upfPID}
	for c := range runtime.NumCPU() {
		m.cpus = append(m.cpus, c)
	}
	return m
}

// run sends l and measures what arrived.
func (m *measurer) run(ctx context.Context, l load) (report.Measurement, error) {
	ms, _, err := m.together(ctx, []load{l})
	if err != nil {
		return report.Measurement{}, err
	}
	return ms[0], nil
}

// together sends loads at the same time, each from its own share of the
// cores, and measures each; the CPU is of them all.
func (m *measurer) together(ctx context.Context, loads []load) ([]report.Measurement, *report.CPU, error) {
	var flights []*flight
	defer func() { closeAll(flights) }()
	for _, l := range loads {
		f, err := m.prepare(l)
		if err != nil {
			return nil, nil, err
		}
		flights = append(flights, f)
	}
	if err := m.round(ctx, flights, maxDuration(loads)); err != nil {
		return nil, nil, err
	}
	out := make([]report.Measurement, len(flights))
	for i, f := range flights {
		var err error
		if out[i], err = f.result(); err != nil {
			return nil, nil, err
		}
	}
	return out, out[0].CPU, nil
}

// round sends flights for d at the same time, each from its share of the
// cores, lets what is on its way arrive, and notes in each flight what
// it sent and what arrived. The CPU is of them all.
func (m *measurer) round(ctx context.Context, flights []*flight, d time.Duration) error {
	var pids []int
	if m.upfPID != 0 {
		pids = append(pids, m.upfPID)
	}
	sample, err := cpu.Start(pids...)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for i, f := range flights {
		cpus := share(m.cpus, i, len(flights))
		if f.l.cores == scenario.OneCore {
			cpus = cpus[:1]
		}
		wg.Go(func() { f.send(runCtx, cpus) })
	}
	wg.Wait()
	usage, cpuErr := sample.Stop()
	settle(flights)
	for _, f := range flights {
		if err := f.endRound(usage, cpuErr == nil); err != nil {
			return err
		}
	}
	return nil
}

// share is the cores of load i of n: every core when there is one load,
// every n-th core from the i-th when there are cores enough, else one
// core shared round-robin.
func share(cpus []int, i, n int) []int {
	if n == 1 {
		return cpus
	}
	if n > len(cpus) {
		return []int{cpus[i%len(cpus)]}
	}
	var out []int
	for k := i; k < len(cpus); k += n {
		out = append(out, cpus[k])
	}
	return out
}

func maxDuration(loads []load) time.Duration {
	var d time.Duration
	for _, l := range loads {
		d = max(d, l.duration)
	}
	return d
}

// settle waits until what the flights sent has arrived: every frame the
// generator's device took, or nothing more for quiet, or drain at most.
// In a closed loop everything has arrived when the generator returns.
func settle(flights []*flight) {
	const quiet, poll = 20 * time.Millisecond, 2 * time.Millisecond
	deadline := time.Now().Add(drain)
	for _, f := range flights {
		last, since := uint64(0), time.Now()
		for time.Now().Before(deadline) {
			got, err := f.sink.Received()
			if err != nil || got >= f.sent-f.notTaken {
				break
			}
			if got != last {
				last, since = got, time.Now()
			} else if time.Since(since) >= quiet {
				break
			}
			time.Sleep(poll)
		}
	}
}

// flight is one load under way, in one round or several: its generator
// and sink, and what each round sent and received. Until reset, the
// generator's sequence numbers go on from one round to the next, and the
// sink counts them all as one stream.
type flight struct {
	l    load
	gen  *tgen.Generator
	sink *tgen.Sink
	ns   string
	dev  string
	// upfNS is the UPF's namespace, and refusedBefore its egress device's
	// refusals before the load (tgen.XmitErrors).
	upfNS         string
	refusedBefore uint64

	res      tgen.Result // of the round under way
	err      error
	sinkRuns uint64 // the sink program's run count before it (sinkRuns)
	rounds   []round
	// Since reset: the frames sent and the device did not take, the
	// sink's count before the round under way.
	sent, notTaken, received uint64
}

// round is what one round of a flight sent and received.
type round struct {
	took, coreTime time.Duration
	closedLoop     bool // one worker, flat out
	tx, txBytes    uint64
	rx             uint64
	cpu            *cpu.Usage
	bpfStats       bool // BPF's run-time statistics were on
}

// closedLoopFloor is the fewest frames a round of a closed loop must send
// to be measured: 64 batches. Fewer are mostly the worker's start, whose
// cost the core's time counts too: a round of one batch of 64 frames took
// 6 ms of the core, 10 kpps, on a VM where the path carries 2-4 Mpps.
const closedLoopFloor = 64 * 64

// measured says whether the round sent enough to be measured: at a set
// rate anything, in a closed loop closedLoopFloor frames. A round whose
// time was up before its worker had the core long enough measured nothing.
func (r round) measured() bool {
	if r.closedLoop {
		return r.tx >= closedLoopFloor
	}
	return r.tx > 0
}

// report is the round's rates, per second of the core's time in a closed
// loop (report.Measurement.PerCoreSecond), else of the round's, and its
// loss.
func (r round) report() report.Round {
	t := r.took
	if r.closedLoop && r.coreTime > 0 {
		t = r.coreTime
	}
	m := report.NewMeasurement("", "", 0, t, r.tx, 0, r.rx, 0)
	return report.Round{TxKpps: m.TxKpps, RxKpps: m.RxKpps, LossPct: m.LossPct, BPFStats: r.bpfStats}
}

func (m *measurer) prepare(l load) (*flight, error) {
	spec := l.spec()
	f := &flight{l: l, upfNS: m.lab.UPF}
	var sinkNS, sinkDev string
	f.ns, f.dev, sinkNS, sinkDev = l.ends(m.lab)
	var err error
	if f.gen, err = tgen.New(spec); err != nil {
		return nil, err
	}
	if f.sink, err = tgen.NewSink(spec, l.path); err == nil {
		err = f.sink.Attach(sinkNS, sinkDev)
	}
	if err != nil {
		f.close()
		return nil, err
	}
	f.refusedBefore, _ = tgen.XmitErrors(f.upfNS, f.l.egress())
	return f, nil
}

// reset starts the flight again from nothing: a new measurement.
func (f *flight) reset() error {
	f.rounds, f.sent, f.notTaken, f.received = nil, 0, 0, 0
	f.refusedBefore, _ = tgen.XmitErrors(f.upfNS, f.l.egress())
	return errors.Join(f.gen.Reset(), f.sink.Reset())
}

func (f *flight) send(ctx context.Context, cpus []int) {
	perWorker := uint64(0)
	if f.l.pps > 0 {
		perWorker = max(uint64(f.l.pps/float64(len(cpus))), 1)
	}
	f.sinkRuns = sinkRuns(f.sink)
	f.res, f.err = f.gen.Run(ctx, tgen.RunOptions{Namespace: f.ns, Device: f.dev, CPUs: cpus, Rate: perWorker})
	f.sent += f.res.Total()
	f.notTaken += f.res.NotTaken
}

// endRound notes the round that just ended.
func (f *flight) endRound(usage cpu.Usage, cpuOK bool) error {
	if f.err != nil {
		return f.err
	}
	received, err := f.sink.Received()
	if err != nil {
		return err
	}
	rd := round{took: f.res.Took, coreTime: f.res.CoreTime, closedLoop: len(f.res.Sent) == 1 && f.l.pps == 0,
		tx: f.res.Total(), txBytes: f.res.Bytes, rx: received - min(f.received, received),
		bpfStats: sinkRuns(f.sink) > f.sinkRuns}
	if cpuOK {
		rd.cpu = &usage
	}
	f.received = received
	f.rounds = append(f.rounds, rd)
	return nil
}

// sinkRuns is how many times the sink's program has run as BPF's run-time
// statistics counted: a count that moves says they were on. Another
// process may turn them on for the whole machine (a benchmark does), and
// then every XDP program run pays two clock reads, which draws a closed
// loop's ratios toward 1: 0.70 became 0.89 at 64 B uplink in one try.
func sinkRuns(s *tgen.Sink) uint64 {
	st, err := s.Program().Stats()
	if err != nil {
		return 0
	}
	return st.RunCount
}

// refused is what the lab's devices refused since reset: the generator's,
// and the UPF's toward the sink (a UPF that does not send through XDP
// redirect refuses none there).
func (f *flight) refused() uint64 {
	n := f.notTaken
	if after, err := tgen.XmitErrors(f.upfNS, f.l.egress()); err == nil && after >= f.refusedBefore {
		n += after - f.refusedBefore
	}
	return n
}

// result is the measurement of the flight's rounds since reset: what the
// generator sent and the sink counted, over the rounds' time (a closed
// loop's over its core's time), with each round's Rx rate if there were
// several.
func (f *flight) result() (report.Measurement, error) {
	sent, err := f.gen.Sent()
	if err != nil {
		return report.Measurement{}, err
	}
	st, err := f.sink.Stats(sent)
	if err != nil {
		return report.Measurement{}, err
	}
	var took, core time.Duration
	var txBytes uint64
	closedLoop := len(f.rounds) > 0
	var usages []cpu.Usage
	var bpfStats bool
	for _, rd := range f.rounds {
		took, core, txBytes = took+rd.took, core+rd.coreTime, txBytes+rd.txBytes
		closedLoop = closedLoop && rd.closedLoop
		bpfStats = bpfStats || rd.bpfStats
		if rd.cpu != nil {
			usages = append(usages, *rd.cpu)
		}
	}
	txOver, rxOver := f.l.frameOverhead()
	meas := report.NewMeasurement(string(f.l.dir), f.l.sizeText, f.l.pps/1e3, took,
		f.sent, txBytes+f.sent*uint64(txOver), st.Unique, st.Bytes+st.Packets*uint64(rxOver))
	if closedLoop {
		meas.PerCoreSecond(core)
	}
	if len(f.rounds) > 1 {
		for _, rd := range f.rounds {
			meas.Rounds = append(meas.Rounds, rd.report())
		}
	}
	meas.Refused, meas.BPFStats = f.refused(), bpfStats
	if st.Latency.Count > 0 {
		meas.Latency = &report.Latency{P50: us(st.Latency.P50), P99: us(st.Latency.P99), Max: us(st.Latency.Max)}
	}
	if len(usages) > 0 {
		meas.CPU = report.CPUOf(cpu.Combine(usages...))
	}
	return meas, nil
}

func (f *flight) close() {
	if f.sink != nil {
		f.sink.Close()
	}
	if f.gen != nil {
		f.gen.Close()
	}
}

func closeAll(flights []*flight) {
	for _, f := range flights {
		f.close()
	}
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// labSessions are sessions for a forwarder without PFCP (the reference),
// numbered as the SMF emulator numbers its slots (topo's UE numbering):
// session k has the UE pool's address k+1 and TEIDs k+1 both ways.
func labSessions(n int) []tgen.Session {
	out := make([]tgen.Session, n)
	for k := range out {
		out[k] = tgen.Session{UE: topo.UEAddr(topo.UEPool, k), UplinkTEID: uint32(k + 1), DownlinkTEID: uint32(k + 1), QFI: 9}
	}
	return out
}
