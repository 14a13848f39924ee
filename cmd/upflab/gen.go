package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/sluice-upf/sluice/lab/pkt"
	"github.com/sluice-upf/sluice/lab/runner"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/tgen"
	"github.com/sluice-upf/sluice/lab/topo"
)

func init() {
	register("gen", "send GTP-U uplink or UDP downlink through the UPF, exact counts (XDP live frames)", runGen)
}

// Bounds of what gen, sink and cbr accept.
const (
	maxSessions  = 1_000_000
	maxFlows     = 1024    // per session, as a scenario's sessions.flows
	maxAllFlows  = 1 << 20 // sessions × flows: the sink keeps a window per flow
	firstULTEID  = 0x1000_0000
	defaultQFI   = 9 // the plain profile's
	defaultFlows = 1
)

// trafficFlags are the flags gen, sink and cbr share: which lab, which
// way, which sessions and flows. The sink must be given the same as the
// generator, to know the frames it counts.
type trafficFlags struct {
	name      string
	direction string
	sessions  int
	file      string
	ue        netip.Addr
	teidUL    uint32
	teidDL    uint32
	qfi       uint
	flows     int
	wait      time.Duration // for the sessions file
}

func (f *trafficFlags) register(fs *flag.FlagSet) {
	f.teidUL, f.teidDL, f.ue = firstULTEID, 1, topo.UEAddr(topo.UEPool, 0)
	fs.StringVar(&f.name, "name", topo.DefaultName, "the lab, as upflab topo up --name `NAME` made it")
	fs.StringVar(&f.direction, "direction", "uplink", "which way: uplink (GTP-U from the gNB) or downlink (UDP from the DN)")
	fs.IntVar(&f.sessions, "sessions", 1, "`N` sessions, numbered as the SMF emulator numbers them: from --ue, --teid-ul and --teid-dl up")
	fs.StringVar(&f.file, "sessions-file", "", "the sessions in `FILE`, as upflab smf --json FILE writes them, instead of numbered ones")
	fs.TextVar(&f.ue, "ue", f.ue, "the first session's UE `ADDRESS`; session k has the k-th after it")
	fs.Func("teid-ul", fmt.Sprintf("the first session's uplink `TEID`, the UPF's (default %#x, as upflab smf --give-teids gives them)", firstULTEID), teidFlag(&f.teidUL))
	fs.Func("teid-dl", "the first session's downlink `TEID`, the gNB's (default 1)", teidFlag(&f.teidDL))
	fs.UintVar(&f.qfi, "qfi", defaultQFI, "the sessions' `QFI`; 0: none, the UPF sends downlink without a PDU Session Container")
	fs.IntVar(&f.flows, "flows", defaultFlows, fmt.Sprintf("`N` flows (UE ports) per session, 1 to %d", maxFlows))
	fs.DurationVar(&f.wait, "wait", time.Minute, "wait up to `DURATION` for the --sessions-file that an upflab smf started just before writes")
}

// traffic checks the flags and gives the traffic they describe, of
// payload mix.
func (f *trafficFlags) traffic(fs *flag.FlagSet, mix []scenario.Weighted) (runner.Traffic, error) {
	t := runner.Traffic{Mix: mix, Flows: f.flows}
	switch f.direction {
	case "uplink", "up":
		t.Direction = scenario.Uplink
	case "downlink", "down":
		t.Direction = scenario.Downlink
	default:
		return t, fmt.Errorf("%w: --direction %q: want uplink or downlink", errUsage, f.direction)
	}
	if f.flows < 1 || f.flows > maxFlows {
		return t, fmt.Errorf("%w: --flows %d: want 1 to %d", errUsage, f.flows, maxFlows)
	}
	var err error
	if f.file != "" {
		if set := setFlags(fs, "sessions", "ue", "teid-ul", "teid-dl", "qfi"); len(set) > 0 {
			return t, fmt.Errorf("%w: --sessions-file gives the sessions: leave out --%s", errUsage, strings.Join(set, ", --"))
		}
		t.Sessions, err = readSessions(fs.Name(), f.file, f.wait)
	} else {
		t.Sessions, err = f.numbered()
	}
	if err != nil {
		return t, err
	}
	if n := len(t.Sessions) * f.flows; n > maxAllFlows {
		return t, fmt.Errorf("%w: %d sessions × %d flows: more than %d flows in all; send fewer", errUsage, len(t.Sessions), f.flows, maxAllFlows)
	}
	return t, nil
}

// numbered are the sessions as the SMF emulator numbers its slots: UE
// addresses, uplink and downlink TEIDs counting up together.
func (f *trafficFlags) numbered() ([]tgen.Session, error) {
	n := f.sessions
	switch {
	case n < 1 || n > maxSessions:
		return nil, fmt.Errorf("%w: --sessions %d: want 1 to %d", errUsage, n, maxSessions)
	case !f.ue.Is4():
		return nil, fmt.Errorf("%w: --ue %v: want an IPv4 address, such as %v", errUsage, f.ue, topo.UEAddr(topo.UEPool, 0))
	case f.qfi > 63:
		return nil, fmt.Errorf("%w: --qfi %d: want 0 to 63", errUsage, f.qfi)
	case f.teidUL == 0 || f.teidDL == 0:
		return nil, fmt.Errorf("%w: --teid-ul and --teid-dl start at 1 at least (TEID 0 is not a session's)", errUsage)
	case uint64(f.teidUL)+uint64(n-1) > math.MaxUint32 || uint64(f.teidDL)+uint64(n-1) > math.MaxUint32:
		return nil, fmt.Errorf("%w: %d sessions from TEID %#x and %#x run past 0xffffffff; start lower", errUsage, n, f.teidUL, f.teidDL)
	}
	out := make([]tgen.Session, n)
	ue := f.ue
	for k := range out {
		if !ue.IsValid() || !ue.Is4() {
			return nil, fmt.Errorf("%w: %d sessions from UE %v run past 255.255.255.255; start lower", errUsage, n, f.ue)
		}
		out[k] = tgen.Session{UE: ue, UplinkTEID: f.teidUL + uint32(k), DownlinkTEID: f.teidDL + uint32(k), QFI: uint8(f.qfi)}
		ue = ue.Next()
	}
	return out, nil
}

// readSessions reads the sessions `upflab smf --json` wrote, waiting up
// to wait for the file: an smf started just before writes it only once
// its sessions are established. who says what waits.
func readSessions(who, path string, wait time.Duration) ([]tgen.Session, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && wait > 0 {
		fmt.Fprintf(os.Stderr, "%s: waiting up to %v for %s, which upflab smf --json writes once its sessions are established\n", who, wait, path)
		for end := time.Now().Add(wait); errors.Is(err, fs.ErrNotExist) && time.Now().Before(end); {
			time.Sleep(100 * time.Millisecond)
			b, err = os.ReadFile(path)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--sessions-file: %w; `upflab smf --json FILE` writes one", err)
	}
	var list []smf.Session
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("--sessions-file %s: not the JSON `upflab smf --json` writes: %v", path, err)
	}
	if len(list) == 0 || len(list) > maxSessions {
		return nil, fmt.Errorf("--sessions-file %s: %d sessions; want 1 to %d", path, len(list), maxSessions)
	}
	out := make([]tgen.Session, len(list))
	for i, x := range list {
		if !x.UE.Is4() {
			return nil, fmt.Errorf("--sessions-file %s: session %d has no IPv4 UE address", path, i)
		}
		out[i] = tgen.Session{UE: x.UE, UplinkTEID: x.UplinkTEID, DownlinkTEID: x.DownlinkTEID, QFI: x.QFI}
	}
	return out, nil
}

// setFlags are those of names given on the command line.
func setFlags(fs *flag.FlagSet, names ...string) []string {
	var set []string
	fs.Visit(func(f *flag.Flag) {
		for _, n := range names {
			if f.Name == n {
				set = append(set, n)
			}
		}
	})
	return set
}

// genRun is what `upflab gen` was asked to do.
type genRun struct {
	name     string
	t        runner.Traffic
	rate     scenario.Rate
	count    uint64
	duration time.Duration
	cpus     []int
	interval time.Duration
	sinkWait time.Duration
}

func runGen(args []string) error {
	g, err := parseGen(args)
	if err != nil {
		return err
	}
	return inLab(g.name, func(ctx context.Context, lab topo.Lab) error {
		_, err := g.run(ctx, os.Stdout, lab)
		return err
	})
}

// inLab runs fn in the lab called name, with a context that Ctrl-C (or
// SIGTERM) ends, for fn to stop cleanly and detach what it attached.
func inLab(name string, fn func(context.Context, topo.Lab) error) error {
	if os.Geteuid() != 0 {
		return errors.New("needs root, for BPF and the lab's namespaces: run it with sudo")
	}
	lab, err := topo.Open(name)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return fn(ctx, lab)
}

func parseGen(args []string) (genRun, error) {
	fs := flags("gen", "--count N | --duration D [flags]")
	var tf trafficFlags
	tf.register(fs)
	g := genRun{rate: scenario.Rate{Max: true}}
	size := fs.String("size", "64", fmt.Sprintf("UDP payload `BYTES` (%d to %d), imix (64:7,576:4,1400:1), or a mix SIZE:WEIGHT,... (4 sizes, weights adding up to 16 at most)", scenario.MinPayload, scenario.MaxPayload))
	fs.Func("rate", "`RATE` in all, in packets or bits a second: 100kpps, 1.5Mpps, 2Gbps (frames as sent); max: flat out (default)", rateFlag(&g.rate))
	fs.Func("m", "short for --rate (TRex's -m)", rateFlag(&g.rate))
	fs.Uint64Var(&g.count, "count", 0, "`N` frames to send in all, exactly")
	fs.Uint64Var(&g.count, "n", 0, "short for --count (xdp-trafficgen's -n)")
	fs.Func("duration", "send for `DURATION` at the most, e.g. 10s", durationFlag(&g.duration))
	fs.Func("d", "short for --duration (TRex's -d)", durationFlag(&g.duration))
	fs.Func("cpus", "`CPUs` to send from, one worker each, e.g. 0,1 (default: every CPU flat out; at a set rate the fewest that keep it up)", cpusFlag(&g.cpus))
	workers := fs.Int("workers", 0, "`N` workers at the most, on the first of --cpus (xdp-trafficgen's --threads)")
	fs.DurationVar(&g.interval, "interval", 0, "print what was sent so far this often, e.g. 1s (0: only at the end)")
	fs.DurationVar(&g.sinkWait, "sink-wait", 5*time.Second, "wait up to `DURATION` for an upflab sink started just before to attach, so that it counts the first frame (0: do not)")
	if err := parseAll(fs, args); err != nil {
		return g, err
	}
	g.name = tf.name
	mix, err := parseMix(*size)
	if err != nil {
		return g, err
	}
	if g.t, err = tf.traffic(fs, mix); err != nil {
		return g, err
	}
	if g.count == 0 && g.duration == 0 {
		return g, fmt.Errorf("%w: give --count, --duration or both: a run must end", errUsage)
	}
	if g.interval < 0 || g.sinkWait < 0 {
		return g, fmt.Errorf("%w: --interval and --sink-wait: want 0 or more", errUsage)
	}
	return g, g.placeWorkers(*workers, len(setFlags(fs, "cpus", "workers")) > 0)
}

// placeWorkers picks the CPUs of the workers: those asked for, or as the
// runner places them (every CPU flat out, the fewest that keep a set rate
// up); never more than flows.
func (g *genRun) placeWorkers(workers int, asked bool) error {
	if workers < 0 {
		return fmt.Errorf("%w: --workers %d: want 1 or more", errUsage, workers)
	}
	if g.cpus == nil {
		for c := range runtime.NumCPU() {
			g.cpus = append(g.cpus, c)
		}
	}
	flows := g.t.Spec().FlowCount()
	if !asked {
		g.cpus = runner.Workers(g.cpus, g.t.PacketsPerSecond(g.rate), flows)
		return nil
	}
	if workers > 0 {
		g.cpus = g.cpus[:min(workers, len(g.cpus))]
	}
	g.cpus = runner.Workers(g.cpus, 0, flows)
	return nil
}

// run sends and prints what was sent, also when ctx ends first.
func (g genRun) run(ctx context.Context, w io.Writer, lab topo.Lab) (tgen.Result, error) {
	gen, err := tgen.New(g.t.Spec())
	if err != nil {
		return tgen.Result{}, err
	}
	defer gen.Close()
	ns, dev, sinkNS, sinkDev := g.t.Ends(lab)
	pps := g.t.PacketsPerSecond(g.rate)
	g.header(w, ns, dev, pps)
	if err := g.waitForSink(ctx, w, lab, sinkNS, sinkDev); err != nil {
		return tgen.Result{}, err
	}
	limited := ctx
	if g.duration > 0 {
		var cancel context.CancelFunc
		limited, cancel = context.WithTimeout(ctx, g.duration)
		defer cancel()
	}
	done := g.progress(w, gen)
	res, err := g.send(limited, gen, tgen.RunOptions{Namespace: ns, Device: dev, Rate: perWorker(pps, len(g.cpus))})
	done()
	if res.Total() > 0 || err == nil {
		g.summary(w, res, dev)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(w, "interrupted: the counts are of what was sent until then")
	}
	return res, err
}

// waitForSink waits up to --sink-wait for a sink on the receiving end: one
// started just before gen may still be loading, and would miss the first
// frames. Without one, gen sends all the same, and says so.
func (g genRun) waitForSink(ctx context.Context, w io.Writer, lab topo.Lab, ns, dev string) error {
	if g.sinkWait == 0 {
		return nil
	}
	said := false
	for end := time.Now().Add(g.sinkWait); ; {
		progs, err := lab.XDP(ns, dev)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(progs, func(p string) bool { return strings.HasPrefix(p, tgen.SinkProgram+"#") }) {
			return nil
		}
		if !time.Now().Before(end) || ctx.Err() != nil {
			fmt.Fprintf(w, "no sink on %s/%s: sending all the same, and nothing there counts the frames\n\n", ns, dev)
			return nil
		}
		if !said {
			fmt.Fprintf(w, "waiting up to %v for a sink on %s/%s (upflab sink; --sink-wait 0 sends at once)\n", g.sinkWait, ns, dev)
			said = true
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// perWorker shares a rate among n workers; 0 stays flat out.
func perWorker(pps float64, n int) uint64 {
	if pps == 0 {
		return 0
	}
	return max(uint64(pps/float64(n)), 1)
}

// send runs the generator. A count the workers cannot share evenly takes
// a second run, of one frame on as many workers as are left over: each
// flow's sequence numbers go on from where the first run left them.
func (g genRun) send(ctx context.Context, gen *tgen.Generator, o tgen.RunOptions) (tgen.Result, error) {
	if g.count == 0 {
		o.CPUs = g.cpus
		return gen.Run(ctx, o)
	}
	n := uint64(len(g.cpus))
	var res tgen.Result
	for _, part := range []struct {
		count   uint64
		workers int
	}{{g.count / n, len(g.cpus)}, {1, int(g.count % n)}} {
		if part.count == 0 || part.workers == 0 || ctx.Err() != nil {
			continue
		}
		o.CPUs, o.Count = g.cpus[:part.workers], part.count
		r, err := gen.Run(ctx, o)
		res = addResult(res, r, len(g.cpus))
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// addResult adds run r, of the first workers, to res, of n workers.
func addResult(res, r tgen.Result, n int) tgen.Result {
	if res.Sent == nil {
		res.Sent = make([]uint64, n)
	}
	for i, s := range r.Sent {
		res.Sent[i] += s
	}
	res.Bytes += r.Bytes
	res.Took += r.Took
	res.NotTaken += r.NotTaken
	return res
}

// progress prints the frames sent so far every interval, until done is
// called.
func (g genRun) progress(w io.Writer, gen *tgen.Generator) (done func()) {
	if g.interval <= 0 {
		return func() {}
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(g.interval)
		defer tick.Stop()
		start, last := time.Now(), uint64(0)
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			flows, err := gen.Sent()
			if err != nil {
				continue
			}
			var sent uint64
			for _, n := range flows {
				sent += n
			}
			fmt.Fprintf(w, "%8.3f s: %d sent, %s\n", time.Since(start).Seconds(), sent, si(float64(sent-last)/g.interval.Seconds(), "pps"))
			last = sent
		}
	}()
	return func() { close(stop); <-stopped }
}

func (g genRun) header(w io.Writer, ns, dev string, pps float64) {
	tx, _ := g.t.FrameOverhead(tgen.UPF)
	to := "to the UPF at " + topo.UPFN3.String()
	if g.t.Direction == scenario.Downlink {
		to = "to the UEs through the UPF's n6"
	}
	limits := []string{}
	if g.count > 0 {
		limits = append(limits, fmt.Sprintf("%d frames", g.count))
	}
	if g.duration > 0 {
		limits = append(limits, "for "+g.duration.String())
	}
	fmt.Fprintf(w, "upflab gen: %s from %s/%s %s: %s, payload %s (frames %s bytes), %s, %s; %s on CPU %s\n\n",
		g.t.Direction, ns, dev, to, sessionsText(g.t), mixText(g.t.Mix), frameSizes(g.t.Mix, tx),
		rateText(g.rate, pps), strings.Join(limits, " or "), plural(len(g.cpus), "worker"), joinInts(g.cpus))
}

// sessionsText says how many sessions and flows, for the first line.
func sessionsText(t runner.Traffic) string {
	return fmt.Sprintf("%s × %s each", plural(len(t.Sessions), "session"), plural(max(t.Flows, 1), "flow"))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// mixText says a payload mix: 64 bytes, or 64, 576, 1400 bytes 7:4:1.
func mixText(mix []scenario.Weighted) string {
	if len(mix) == 1 {
		return fmt.Sprintf("%d bytes", mix[0].Bytes)
	}
	sizes, weights := make([]int, len(mix)), make([]string, len(mix))
	for i, m := range mix {
		sizes[i], weights[i] = m.Bytes, strconv.Itoa(m.Weight)
	}
	return fmt.Sprintf("%s bytes %s", joinInts(sizes), strings.Join(weights, ":"))
}

// frameSizes are the Ethernet frames (without FCS) of a payload mix.
func frameSizes(mix []scenario.Weighted, overhead int) string {
	s := make([]string, len(mix))
	for i, m := range mix {
		s[i] = strconv.Itoa(m.Bytes + pkt.IPv4Len + pkt.UDPLen + overhead)
	}
	return strings.Join(s, ", ")
}

func rateText(r scenario.Rate, pps float64) string {
	if pps == 0 {
		return "flat out"
	}
	if r.BPS > 0 {
		return fmt.Sprintf("%s (%s)", r, si(pps, "pps"))
	}
	return si(pps, "pps")
}

// summary prints the counts as TRex's port statistics do, a column per
// worker and the total, then the line to quote.
func (g genRun) summary(w io.Writer, res tgen.Result, dev string) {
	tx, _ := g.t.FrameOverhead(tgen.UPF)
	secs := res.Took.Seconds()
	total := res.Total()
	l2 := res.Bytes + total*uint64(tx)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	// Names padded to one width: left-aligned in a right-aligned table.
	row := func(name string, perWorker func(i int) string, all string) {
		fmt.Fprintf(tw, "%-9s\t", name)
		for i := range res.Sent {
			fmt.Fprintf(tw, "%s\t", perWorker(i))
		}
		fmt.Fprintf(tw, "%s\t\n", all)
	}
	none := func(int) string { return "" }
	row("", func(i int) string { return fmt.Sprintf("cpu %d", g.cpus[i]) }, "total")
	row("opackets", func(i int) string { return strconv.FormatUint(res.Sent[i], 10) }, strconv.FormatUint(total, 10))
	row("obytes", none, strconv.FormatUint(l2, 10))
	row("Tx pps", func(i int) string { return si(perSecond(res.Sent[i], secs), "pps") }, si(perSecond(total, secs), "pps"))
	row("Tx bps L2", none, si(8*perSecond(l2, secs), "bps"))
	row("Tx bps L1", none, si(8*perSecond(l2+total*l1Extra, secs), "bps"))
	tw.Flush()
	fmt.Fprintf(w, "\nsent %d frames (%d bytes) in %.3f s: %.2f Kpps, %.3f Gbit/s\n",
		total, l2, secs, perSecond(total, secs)/1e3, 8*perSecond(l2, secs)/1e9)
	if res.NotTaken > 0 {
		fmt.Fprintf(w, "note: %s did not take %d of them (its xdp_xmit_errors): lost before the UPF; the sink counts them as lost\n", dev, res.NotTaken)
	}
}

// l1Extra is what the wire adds to a frame as counted: FCS, preamble and
// inter-frame gap (TRex's L1 over L2).
const l1Extra = 4 + 8 + 12

func perSecond(n uint64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

// si writes a rate as TRex does: 150.07 Kpps, 4.67 Gbps.
func si(v float64, unit string) string {
	for _, p := range []struct {
		prefix string
		scale  float64
	}{{"G", 1e9}, {"M", 1e6}, {"K", 1e3}} {
		if v >= p.scale {
			return fmt.Sprintf("%.2f %s%s", v/p.scale, p.prefix, unit)
		}
	}
	return fmt.Sprintf("%.2f %s", v, unit)
}

// parseMix reads --size: payload bytes, imix, or SIZE:WEIGHT,...
func parseMix(s string) ([]scenario.Weighted, error) {
	if strings.EqualFold(s, "imix") {
		return scenario.IMIX, nil
	}
	var mix []scenario.Weighted
	total := 0
	for _, part := range strings.Split(s, ",") {
		size, weight, hasWeight := strings.Cut(strings.TrimSpace(part), ":")
		w := 1
		if hasWeight {
			var err error
			if w, err = strconv.Atoi(weight); err != nil || w < 1 {
				return nil, fmt.Errorf("%w: --size %s: %q is not a weight; want a whole number from 1, e.g. 64:7,576:4,1400:1", errUsage, s, weight)
			}
		}
		b, err := payloadSize(size)
		if err != nil {
			return nil, fmt.Errorf("%w: --size %s: %v, or imix", errUsage, s, err)
		}
		mix = append(mix, scenario.Weighted{Bytes: b, Weight: w})
		total += w
	}
	if len(mix) > 4 || total > 16 {
		return nil, fmt.Errorf("%w: --size %s: the generator mixes 4 sizes at the most, weights adding up to 16 at the most", errUsage, s)
	}
	return mix, nil
}

// payloadSize reads one UDP payload size.
func payloadSize(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, errPayload(s)
	}
	return n, checkPayload(n)
}

// checkPayload refuses a payload the generator cannot send.
func checkPayload(n int) error {
	if n < scenario.MinPayload || n > scenario.MaxPayload {
		return errPayload(strconv.Itoa(n))
	}
	return nil
}

func errPayload(s string) error {
	return fmt.Errorf("%q: want payload bytes from %d (the generator's stamp) to %d (a 1500-byte MTU after the tunnel)",
		s, scenario.MinPayload, scenario.MaxPayload)
}

func rateFlag(r *scenario.Rate) func(string) error {
	return func(s string) error {
		v, err := scenario.ParseRate(s)
		if err == nil {
			*r = v
		}
		return err
	}
}

func durationFlag(d *time.Duration) func(string) error {
	return func(s string) error {
		v, err := time.ParseDuration(s)
		if err != nil || v <= 0 {
			return fmt.Errorf("want a duration above 0 with its unit, such as 10s or 500ms")
		}
		*d = v
		return nil
	}
}

// cpusFlag parses a list of CPUs such as 0,1, each once.
func cpusFlag(cpus *[]int) func(string) error {
	return func(list string) error {
		*cpus = nil
		for _, f := range strings.Split(list, ",") {
			c, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || c < 0 || c >= runtime.NumCPU() {
				return fmt.Errorf("%q: want CPU numbers from 0 to %d, such as 0,1", f, runtime.NumCPU()-1)
			}
			if slices.Contains(*cpus, c) {
				return fmt.Errorf("CPU %d twice: a CPU takes one worker", c)
			}
			*cpus = append(*cpus, c)
		}
		return nil
	}
}
