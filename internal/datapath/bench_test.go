package datapath

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/refs"
	"github.com/sluice-upf/sluice/lab/tgen"
)

// BenchmarkDatapath measures the datapath beside the reference forwarder
// and the minimal UPF, in one run, and prints a table of medians and
// ratios:
//
//	go test -run '^$' -bench Datapath -benchtime 1x ./internal/datapath
//
// SLUICE_BENCH=regexp keeps only the cases whose names match (the
// reference forwarder is always measured, and the minimal UPF with the
// sessions and direction of every case kept).
//
// SLUICE_BENCH_TRIAL=file.o measures beside each of upfd's cases the same
// case on a trial build of bpf/upf.bpf.c (go generate's object, copied out
// of a work tree with the change; scripts/bench-trial.sh builds it), in the
// same rounds, the two in turn and in alternating order. The rounds'
// ratios are free of the drift between runs, 10-30 % on this VM, though
// not of the noise within one (docs/benchmarks.md, "Paired trials").
//
// SLUICE_BENCH_LINES=file.json writes, at the end, where the machine code
// of each case's program came from, line by line, for a profile of the run
// (scripts/bench-profile.sh).
//
// Two measures per case: the program's time per packet under BPF_PROG_RUN,
// each run on a fresh copy of the frame; and its in-kernel run time per
// packet (BPF run-time statistics) while attached, under real traffic from
// the live-frame generator through veths, with the rate the sink saw.
func BenchmarkDatapath(b *testing.B) {
	const frames, progRuns = 1 << 20, 2000
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("SLUICE_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	ns := testenv.UPF(b)
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		b.Fatal(err)
	}
	defer stats.Close()

	upf := []*benchCase{
		{name: "uplink, 1 PDR", dir: N3, sessions: 1, pdrs: 1},
		{name: "uplink, 32 PDRs, last matches", dir: N3, sessions: 1, pdrs: 32},
		{name: "uplink, MBR QER + URR", dir: N3, sessions: 1, pdrs: 1, qos: true},
		{name: "downlink, 1 PDR", dir: N6, sessions: 1, pdrs: 1},
		{name: "downlink, MBR QER + URR", dir: N6, sessions: 1, pdrs: 1, qos: true},
		{name: "uplink, 1 PDR, 1400 B", dir: N3, sessions: 1, pdrs: 1, payload: 1400},
		{name: "downlink, 1 PDR, 1400 B", dir: N6, sessions: 1, pdrs: 1, payload: 1400},
		{name: "uplink, MBR QER + URR with a volume quota", dir: N3, sessions: 1, pdrs: 1, qos: true, quota: true},
		{name: "downlink, MBR QER + URR with a volume quota", dir: N6, sessions: 1, pdrs: 1, qos: true, quota: true},
		{name: "uplink, 1,000 sessions", dir: N3, sessions: 1_000, pdrs: 1},
		{name: "downlink, 1,000 sessions", dir: N6, sessions: 1_000, pdrs: 1},
		{name: "uplink, 100,000 sessions", dir: N3, sessions: 100_000, pdrs: 1},
		{name: "uplink, 100,000 sessions, UE filter, MBR QER + URR", dir: N3, sessions: 100_000, pdrs: 1, qos: true, ueFilter: true},
		{name: "uplink, 100,000 sessions, as IPv4v6: 2 PDRs, the first matches", dir: N3, sessions: 100_000, pdrs: 2, qos: true, ueFilter: true, firstMatches: true},
		{name: "downlink, 100,000 sessions", dir: N6, sessions: 100_000, pdrs: 1},
		{name: "downlink, 100,000 sessions, UE filter, MBR QER + URR", dir: N6, sessions: 100_000, pdrs: 1, qos: true, ueFilter: true},
		{name: "uplink, 1,000,000 sessions", dir: N3, sessions: 1_000_000, pdrs: 1},
		{name: "uplink, 1,000,000 sessions, UE filter, MBR QER + URR", dir: N3, sessions: 1_000_000, pdrs: 1, qos: true, ueFilter: true},
		{name: "downlink, 1,000,000 sessions", dir: N6, sessions: 1_000_000, pdrs: 1},
		{name: "downlink, 1,000,000 sessions, UE filter, MBR QER + URR", dir: N6, sessions: 1_000_000, pdrs: 1, qos: true, ueFilter: true},
	}
	if pat := os.Getenv("SLUICE_BENCH"); pat != "" {
		re := regexp.MustCompile(pat)
		upf = slices.DeleteFunc(upf, func(c *benchCase) bool { return !re.MatchString(c.name) })
	}
	if obj := os.Getenv("SLUICE_BENCH_TRIAL"); obj != "" {
		upf = withTrials(upf, obj)
	}
	cases := append([]*benchCase{
		{name: "floor: empty program (measurement overhead)", kind: kindFloor, dir: N3},
	}, withReferences(upf)...)
	cases = append(cases, withMinimal(upf)...)
	for _, c := range cases {
		c.setUp(b, ns)
	}
	for round := range rounds {
		for _, c := range inTurn(cases, round) {
			c.measure(b, ns, frames, progRuns)
		}
		b.Logf("round %d of %d done", round+1, rounds)
		if os.Getenv("SLUICE_BENCH_DEBUG") != "" {
			for _, c := range cases {
				b.Logf("%s: prog.Run %v in-kernel %v Mpps %v", c.name, c.runNS, c.kernNS, c.mpps)
			}
		}
	}
	if path := os.Getenv("SLUICE_BENCH_LINES"); path != "" {
		if err := writeJitLines(path, cases); err != nil {
			b.Fatal(err)
		}
	}
	printBench(cases)
	printTrials(cases)
}

// benchKind is what a case measures.
type benchKind uint8

const (
	kindUPF   benchKind = iota // upfd's datapath
	kindFloor                  // a program that drops at once: what measuring itself costs
	kindRef                    // the reference forwarder
	kindMin                    // the minimal UPF
)

type benchCase struct {
	name     string
	kind     benchKind
	dir      Role // N3: uplink, N6: downlink
	sessions int
	pdrs     int
	payload  int // UDP payload octets of every frame; 0: 64
	qos      bool
	quota    bool // with qos, the URR has a volume quota, never reached
	ueFilter bool // the uplink PDR names the UE's address, as the SMFs' do
	// firstMatches: of pdrs, the first matches (an IPv4v6 session's uplink,
	// Open5GS's: a filter for each UE address, IPv4's first), not the last
	firstMatches bool
	trial        string     // upfd's objects from this file, not the built-in ones
	base         *benchCase // for a trial, the same case on the built-in objects

	// minimal is the minimal UPF's case with this one's sessions,
	// direction and frame size, measured in the same rounds (upfd's cases).
	minimal *benchCase

	frame []byte
	gen   *tgen.Generator
	sink  *tgen.Sink
	d     *Datapath
	fwd   *refs.Forwarder
	mu    *refs.Minimal
	empty *ebpf.Program
	link  link.Link

	runNS, kernNS, mpps []float64
}

// withTrials puts after each of upfd's cases its twin on the objects in
// file obj.
func withTrials(upf []*benchCase, obj string) []*benchCase {
	var out []*benchCase
	for _, c := range upf {
		t := *c
		t.name, t.trial, t.base = c.name+", trial", obj, c
		out = append(out, c, &t)
	}
	return out
}

// inTurn is the order of round's measurements: cases' own, with each trial
// measured before its base in odd rounds, so that neither always follows
// the other.
func inTurn(cases []*benchCase, round int) []*benchCase {
	out := slices.Clone(cases)
	if round%2 == 0 {
		return out
	}
	for i := 1; i < len(out); i++ {
		if out[i].base != nil && out[i].base == out[i-1] {
			out[i-1], out[i] = out[i], out[i-1]
		}
	}
	return out
}

// withReferences is the reference forwarder's cases: one for each
// direction with 64-byte frames, and one for each other frame size of
// upfd's cases.
func withReferences(upf []*benchCase) []*benchCase {
	refs := []*benchCase{
		{name: "reference forwarder, uplink frame", kind: kindRef, dir: N3},
		{name: "reference forwarder, downlink frame", kind: kindRef, dir: N6},
	}
	for _, c := range upf {
		if c.payloadSize() != 64 && !slices.ContainsFunc(refs, c.sameFrames) {
			refs = append(refs, &benchCase{kind: kindRef, dir: c.dir, payload: c.payload,
				name: fmt.Sprintf("reference forwarder, %s frame%s", direction(c.dir), c.sizeSuffix())})
		}
	}
	return refs
}

// withMinimal puts before upfd's cases of each direction, number of
// sessions and frame size the minimal UPF's case with the same, so that
// each round measures it beside them. upfd's cases with the same stay
// together, in the order of the first of them.
func withMinimal(upf []*benchCase) []*benchCase {
	type group struct {
		dir      Role
		sessions int
		payload  int
	}
	var order []group
	groups := map[group][]*benchCase{}
	for _, c := range upf {
		k := group{c.dir, c.sessions, c.payloadSize()}
		if groups[k] == nil {
			m := &benchCase{kind: kindMin, dir: c.dir, sessions: c.sessions, payload: c.payload,
				name: fmt.Sprintf("minimal UPF, %s, %s%s", direction(c.dir), sessionCount(c.sessions), c.sizeSuffix())}
			groups[k] = []*benchCase{m}
			order = append(order, k)
		}
		c.minimal = groups[k][0]
		groups[k] = append(groups[k], c)
	}
	var cases []*benchCase
	for _, k := range order {
		cases = append(cases, groups[k]...)
	}
	return cases
}

// payloadSize is the UDP payload of the case's frames, in octets.
func (c *benchCase) payloadSize() int {
	if c.payload == 0 {
		return 64
	}
	return c.payload
}

// sizeSuffix names the frames' size in a case's name, where it is not 64.
func (c *benchCase) sizeSuffix() string {
	if c.payloadSize() == 64 {
		return ""
	}
	return fmt.Sprintf(", %d B", c.payloadSize())
}

// sameFrames: the reference case r is measured with c's frames.
func (c *benchCase) sameFrames(r *benchCase) bool {
	return r.dir == c.dir && r.payloadSize() == c.payloadSize()
}

func direction(r Role) string {
	if r == N3 {
		return "uplink"
	}
	return "downlink"
}

// sessionCount is "1 session", "1,000 sessions" and so on.
func sessionCount(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n == 1 {
		return s + " session"
	}
	return s + " sessions"
}

func (c *benchCase) out() Role {
	if c.dir == N3 {
		return N6
	}
	return N3
}

// qfi is the sessions' QFI as the sink checks it: upfd's downlink G-PDUs
// carry one only with a QER; the minimal UPF always sends the container,
// with QFI 9.
func (c *benchCase) qfi() uint8 {
	if c.qos || c.kind == kindMin {
		return qfiDef
	}
	return 0
}

// The frames: a 64-byte UDP payload (or the case's), uplink in a G-PDU
// with a PDU Session Container. The generator cycles over the sessions' TEIDs and UE addresses;
// the sink behind checks what the reference forwarder, the minimal UPF or
// the datapath made of them.
func (c *benchCase) setUp(b *testing.B, ns string) {
	spec := tgen.Spec{Direction: tgen.Uplink, Size: 20 + 8 + c.payloadSize(), GNB: addrGNB, UPF: addrN3, DN: addrDN,
		SrcMAC: macGNB, DstMAC: macN3}
	if c.dir == N3 {
		f := upFlow
		f.payload = c.payloadSize()
		c.frame = uplink(tunnel{src: addrGNB, dst: addrN3, teid: teidUL, qfi: 9, pduType: 1}, f)
	} else {
		f := downFlow
		f.dst, f.payload = benchUE(0), c.payloadSize()
		c.frame = downlink(f)
		spec.Direction, spec.SrcMAC, spec.DstMAC = tgen.Downlink, macRouter, macN6
	}
	for i := range max(c.sessions, 1) {
		spec.Sessions = append(spec.Sessions, tgen.Session{UE: benchUE(i), UplinkTEID: teidUL + uint32(i), DownlinkTEID: teidDL + uint32(i), QFI: c.qfi()})
	}
	// Traffic visits the sessions in an order of its own, not the order
	// they were installed in, which is the order of their slots: a packet
	// finds nothing in the caches that the previous one brought in.
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(spec.Sessions), func(i, j int) {
		spec.Sessions[i], spec.Sessions[j] = spec.Sessions[j], spec.Sessions[i]
	})
	path := tgen.UPF
	if c.kind == kindRef || c.kind == kindFloor {
		path = tgen.Wire
	}
	var err error
	if c.gen, err = tgen.New(spec); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.gen.Close() })
	if c.sink, err = tgen.NewSink(spec, path); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.sink.Close() })
	switch c.kind {
	case kindFloor:
		c.empty, err = ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL",
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, int32(Dropped)), asm.Return()}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.empty.Close() })
	case kindRef:
		err = netns.Do(ns, func() (err error) {
			c.fwd, err = refs.Load(refs.Port{Name: "n3", Peer: macGNB}, refs.Port{Name: "n6", Peer: macRouter})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.fwd.Close() })
	case kindMin:
		c.setUpMinimal(b, ns)
	case kindUPF:
		if c.trial != "" {
			builtIn := objects
			objects = func() (*ebpf.CollectionSpec, error) { return ebpf.LoadCollectionSpec(c.trial) }
			defer func() { objects = builtIn }()
		}
		c.d = loadIn(b, ns, Options{Interfaces: []Interface{{Name: "n3", Role: N3}, {Name: "n6", Role: N6}}, GTPUAddrs: []netip.Addr{addrN3}, MaxSessions: c.sessions})
		start := time.Now()
		if err := c.d.Apply(benchSessions(c)); err != nil {
			b.Fatal(err)
		}
		if c.sessions > 1 {
			b.Logf("%s: installed in %v; %s", c.name, time.Since(start).Round(time.Millisecond), memoryPerSession(b, c.d, c.sessions))
		}
	}
}

// setUpMinimal loads the minimal UPF with the sessions benchSessions gives
// upfd: the same TEIDs, UE addresses and gNB, and QFI 9.
func (c *benchCase) setUpMinimal(b *testing.B, ns string) {
	err := netns.Do(ns, func() (err error) {
		c.mu, err = refs.LoadMinimal(refs.Port{Name: "n3", Peer: macGNB}, refs.Port{Name: "n6", Peer: macRouter},
			refs.MinimalOptions{GTPUAddr: addrN3, MaxSessions: c.sessions})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.mu.Close() })
	sessions := make([]refs.Session, c.sessions)
	for i := range sessions {
		s := uint32(i)
		sessions[i] = refs.Session{UplinkTEID: teidUL + s, UE: benchUE(i), DownlinkTEID: teidDL + s, GNB: addrGNB, QFI: qfiDef}
	}
	start := time.Now()
	if err := c.mu.Add(sessions); err != nil {
		b.Fatal(err)
	}
	if c.sessions > 1 {
		b.Logf("%s: installed in %v", c.name, time.Since(start).Round(time.Millisecond))
	}
}

// memoryPerSession says how much kernel memory the maps hold, in all and
// per session, and map by map, the largest first.
func memoryPerSession(b testing.TB, d *Datapath, sessions int) string {
	byMap, err := d.MapMemoryByName()
	if err != nil {
		b.Fatal(err)
	}
	var total uint64
	var parts []string
	for _, name := range slices.SortedFunc(maps.Keys(byMap), func(x, y string) int { return cmp.Compare(byMap[y], byMap[x]) }) {
		total += byMap[name]
		if per := byMap[name] / uint64(sessions); per > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", name, per))
		}
	}
	return fmt.Sprintf("maps hold %d MiB, %d bytes a session (%s)", total>>20, total/uint64(sessions), strings.Join(parts, ", "))
}

func benchUE(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, 64 + byte(i>>16), byte(i >> 8), byte(i)})
}

// benchSessions: session i has TEID 0x100+i and UE benchUE(i), its own FARs,
// and with qos an MBR QER (100 Gbit/s, never reached) and a URR, with
// quota one with a volume quota (2^62 bytes, never reached); with
// ueFilter the uplink PDR matches the UE's address as the source.
func benchSessions(c *benchCase) []Op {
	var ops []Op
	for i := range c.sessions {
		s := uint32(i)
		ul, dl := 1+2*s, 2+2*s
		ops = append(ops,
			PutFAR{ID: ul, FAR: FAR{Action: Forw}},
			PutFAR{ID: dl, FAR: FAR{Action: Forw, TEID: teidDL + s, Peer: addrGNB, Local: addrN3}})
		up := PDR{ID: 1, Src: Access, OHR: OHRGTPUIP, FARID: ul}
		down := PDR{ID: 2, Src: Core, FARID: dl}
		if c.qos {
			ops = append(ops, PutQER{ID: 1 + s, QER: QER{QFI: 9, MBRUplink: 100e9, MBRDownlink: 100e9}},
				PutURR{ID: 1 + s, URR: URR{HasQuota: c.quota, Quota: 1 << 62}})
			up.QERIDs, up.URRIDs = [2]uint32{1 + s}, [2]uint32{1 + s}
			down.QERIDs, down.URRIDs = [2]uint32{1 + s}, [2]uint32{1 + s}
		}
		if c.ueFilter {
			up.Filter, up.SDFID = SDF{Src: netip.PrefixFrom(benchUE(i), 32)}, 1+s
		}
		ups := []PDR{up}
		if c.pdrs > 1 {
			// pdrs-1 filters on ports no frame uses, and the catch-all last
			// (or first).
			ups = nil
			for k := range c.pdrs - 1 {
				p := up
				p.ID, p.Filter = uint16(k+10), SDF{Proto: 6, DstPorts: PortRange{1, 1}}
				ups = append(ups, p)
			}
			ups = append(ups, up)
			if c.firstMatches {
				slices.Reverse(ups)
			}
		}
		ops = append(ops,
			PutUplink{UplinkKey{teidUL + s, 0}, Rules{Session: s, PDRs: ups, ListID: 1 + s}},
			PutDownlink{netip.PrefixFrom(benchUE(i), 32), Rules{Session: s, PDRs: []PDR{down}}})
	}
	return ops
}

func (c *benchCase) program() *ebpf.Program {
	switch c.kind {
	case kindFloor:
		return c.empty
	case kindRef:
		return c.fwd.Program()
	case kindMin:
		if c.dir == N3 {
			return c.mu.Uplink()
		}
		return c.mu.Downlink()
	}
	return c.d.Program(c.dir)
}

func (c *benchCase) attach(ns string) error {
	return netns.Do(ns, func() (err error) {
		switch c.kind {
		case kindFloor:
			ifc, err := net.InterfaceByName("n3")
			if err != nil {
				return err
			}
			c.link, err = link.AttachXDP(link.XDPOptions{Program: c.empty, Interface: ifc.Index, Flags: link.XDPDriverMode})
			return err
		case kindRef:
			return c.fwd.Attach()
		case kindMin:
			return c.mu.Attach()
		}
		return c.d.Attach(Native)
	})
}

func (c *benchCase) detach() error {
	switch c.kind {
	case kindFloor:
		return c.link.Close()
	case kindRef:
		return c.fwd.Detach()
	case kindMin:
		return c.mu.Detach()
	}
	return c.d.Detach()
}

func (c *benchCase) measure(b *testing.B, ns string, frames uint64, progRuns int) {
	ingress := map[Role]string{N3: "n3", N6: "n6"}[c.dir]
	ns1, err := progRunNS(ns, c.program(), c.frame, ingress, progRuns)
	if err != nil {
		b.Fatalf("%s: %v", c.name, err)
	}
	c.runNS = append(c.runNS, ns1)

	if err := c.attach(ns); err != nil {
		b.Fatal(err)
	}
	defer c.detach()
	peer := map[Role]string{N3: "n3p", N6: "n6p"} // where the generator sends, and the sink listens
	if err := c.sink.Attach(ns, peer[c.out()]); err != nil {
		b.Fatal(err)
	}
	defer c.sink.Detach()
	if err := errors.Join(c.gen.Reset(), c.sink.Reset()); err != nil {
		b.Fatal(err)
	}
	before, err := c.program().Stats()
	if err != nil {
		b.Fatal(err)
	}
	res, err := c.gen.Run(context.Background(), tgen.RunOptions{Namespace: ns, Device: peer[c.dir], CPUs: []int{0}, Count: frames})
	if err != nil {
		b.Fatal(err)
	}
	took := res.Took
	time.Sleep(20 * time.Millisecond) // let the last batch drain
	after, _ := c.program().Stats()
	got, err := c.sink.Stats(nil)
	if err != nil {
		b.Fatal(err)
	}
	runs := after.RunCount - before.RunCount
	if runs == 0 {
		b.Fatalf("%s: the attached program never ran", c.name)
	}
	c.kernNS = append(c.kernNS, float64(after.Runtime-before.Runtime)/float64(runs))
	c.mpps = append(c.mpps, float64(got.Packets)/took.Seconds()/1e6)
	if got.Packets < uint64(frames)*9/10 && c.kind != kindFloor {
		b.Logf("%s: only %d of %d frames reached the sink valid (invalid: %v)", c.name, got.Packets, frames, got.Invalid)
	}
}

// progRunNS is the median time per run of prog on a fresh copy of frame,
// as if it arrived on dev: BPF_PROG_RUN with repeat 1, called runs times.
func progRunNS(ns string, prog *ebpf.Program, frame []byte, dev string, runs int) (float64, error) {
	var times []float64
	err := netns.Do(ns, func() error {
		ifc, err := netInterface(dev)
		if err != nil {
			return err
		}
		out := make([]byte, len(frame)+256)
		for range runs {
			d, err := tgen.RunXDP(prog, frame, out, ifc)
			if err != nil {
				return err
			}
			times = append(times, float64(d))
		}
		return nil
	})
	return median(times), err
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// printTrials gives each trial's in-kernel ns/pkt and Mpps over its base's,
// round by round: the median of the rounds' ratios, and their range.
func printTrials(cases []*benchCase) {
	for _, c := range cases {
		if c.base == nil {
			continue
		}
		kern, mpps := pairedRatios(c.kernNS, c.base.kernNS), pairedRatios(c.mpps, c.base.mpps)
		fmt.Printf("%s over the built-in objects, round by round: in-kernel ns/pkt %.3f (%.3f-%.3f), Mpps %.3f (%.3f-%.3f)\n",
			c.name, median(kern), slices.Min(kern), slices.Max(kern), median(mpps), slices.Min(mpps), slices.Max(mpps))
		fmt.Printf("  in-kernel, rounds in order: %.2f\n", kern)
	}
}

func pairedRatios(v, to []float64) []float64 {
	r := make([]float64, len(v))
	for i := range v {
		r[i] = v[i] / to[i]
	}
	return r
}

// medians are a case's figures: prog.Run ns/pkt, in-kernel ns/pkt, Mpps.
type medians struct{ run, kern, mpps float64 }

func (c *benchCase) medians() medians {
	if c == nil {
		return medians{}
	}
	return medians{median(c.runNS), median(c.kernNS), median(c.mpps)}
}

func printBench(cases []*benchCase) {
	var refs []*benchCase
	for _, c := range cases {
		if c.kind == kindRef {
			refs = append(refs, c)
		}
	}
	// ratio is empty where there is nothing to compare with.
	ratio := func(v, to float64) string {
		if to == 0 {
			return ""
		}
		return fmt.Sprintf("%.2f", v/to)
	}
	w := os.Stdout
	fmt.Fprintf(w, "\n| case | prog.Run ns/pkt | x ref | x min | in-kernel ns/pkt | x ref | x min | Mpps | x ref | x min |\n")
	fmt.Fprintf(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range cases {
		m := c.medians()
		if c.kind == kindFloor {
			fmt.Fprintf(w, "| %s | %.1f | | | %.1f | | | | | |\n", c.name, m.run, m.kern)
			continue
		}
		var ref *benchCase
		if i := slices.IndexFunc(refs, c.sameFrames); i >= 0 {
			ref = refs[i]
		}
		r, mn := ref.medians(), c.minimal.medians()
		fmt.Fprintf(w, "| %s | %.1f | %s | %s | %.1f | %s | %s | %.2f | %s | %s |\n", c.name,
			m.run, ratio(m.run, r.run), ratio(m.run, mn.run),
			m.kern, ratio(m.kern, r.kern), ratio(m.kern, mn.kern),
			m.mpps, ratio(m.mpps, r.mpps), ratio(m.mpps, mn.mpps))
	}
	fmt.Fprintf(w, "\nMedians of %d rounds; x ref is to the reference forwarder on the same direction's frames, "+
		"x min to the minimal UPF with the same sessions, direction and frames, same run; 64-byte payloads where no size is named.\n", len(cases[0].runNS))
}
