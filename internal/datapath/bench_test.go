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

// BenchmarkDatapath measures the datapath beside the reference forwarder,
// in one run, and prints a table of medians and ratios:
//
//	go test -run '^$' -bench Datapath -benchtime 1x ./internal/datapath
//
// SLUICE_BENCH=regexp keeps only the cases whose names match (the
// reference forwarder is always measured).
//
// Two measures per case: the program's time per packet under BPF_PROG_RUN,
// each run on a fresh copy of the frame; and its in-kernel run time per
// packet (BPF run-time statistics) while attached, under real traffic from
// the live-frame generator through veths, with the rate the sink saw.
func BenchmarkDatapath(b *testing.B) {
	const rounds, frames, progRuns = 5, 1 << 20, 2000
	ns := testenv.UPF(b)
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		b.Fatal(err)
	}
	defer stats.Close()

	cases := []*benchCase{
		{name: "floor: empty program (measurement overhead)", dir: N3, floor: true},
		{name: "reference forwarder, uplink frame", dir: N3, ref: true},
		{name: "reference forwarder, downlink frame", dir: N6, ref: true},
		{name: "uplink, 1 PDR", dir: N3, sessions: 1, pdrs: 1},
		{name: "downlink, 1 PDR", dir: N6, sessions: 1, pdrs: 1},
		{name: "uplink, 32 PDRs, last matches", dir: N3, sessions: 1, pdrs: 32},
		{name: "uplink, MBR QER + URR", dir: N3, sessions: 1, pdrs: 1, qos: true},
		{name: "downlink, MBR QER + URR", dir: N6, sessions: 1, pdrs: 1, qos: true},
		{name: "uplink, 1,000,000 sessions", dir: N3, sessions: 1_000_000, pdrs: 1},
		{name: "downlink, 1,000,000 sessions", dir: N6, sessions: 1_000_000, pdrs: 1},
		{name: "uplink, 100,000 sessions, UE filter, MBR QER + URR", dir: N3, sessions: 100_000, pdrs: 1, qos: true, ueFilter: true},
		{name: "downlink, 100,000 sessions, UE filter, MBR QER + URR", dir: N6, sessions: 100_000, pdrs: 1, qos: true, ueFilter: true},
		{name: "uplink, 1,000,000 sessions, UE filter, MBR QER + URR", dir: N3, sessions: 1_000_000, pdrs: 1, qos: true, ueFilter: true},
		{name: "downlink, 1,000,000 sessions, UE filter, MBR QER + URR", dir: N6, sessions: 1_000_000, pdrs: 1, qos: true, ueFilter: true},
	}
	if pat := os.Getenv("SLUICE_BENCH"); pat != "" {
		re := regexp.MustCompile(pat)
		cases = slices.DeleteFunc(cases, func(c *benchCase) bool { return !c.ref && !c.floor && !re.MatchString(c.name) })
	}
	for _, c := range cases {
		c.setUp(b, ns)
	}
	for round := range rounds {
		for _, c := range cases {
			c.measure(b, ns, frames, progRuns)
		}
		b.Logf("round %d of %d done", round+1, rounds)
		if os.Getenv("SLUICE_BENCH_DEBUG") != "" {
			for _, c := range cases {
				b.Logf("%s: prog.Run %v in-kernel %v Mpps %v", c.name, c.runNS, c.kernNS, c.mpps)
			}
		}
	}
	printBench(cases)
}

type benchCase struct {
	name     string
	dir      Role // N3: uplink, N6: downlink
	ref      bool // the reference forwarder
	floor    bool // a program that drops at once: what measuring itself costs
	sessions int
	pdrs     int
	qos      bool
	ueFilter bool // the uplink PDR names the UE's address, as the SMFs' do

	frame []byte
	gen   *tgen.Generator
	sink  *tgen.Sink
	d     *Datapath
	fwd   *refs.Forwarder
	empty *ebpf.Program
	link  link.Link

	runNS, kernNS, mpps []float64
}

func (c *benchCase) out() Role {
	if c.dir == N3 {
		return N6
	}
	return N3
}

// The frames: a 64-byte UDP payload, uplink in a G-PDU with a PDU Session
// Container. The generator cycles over the sessions' TEIDs and UE addresses;
// the sink behind checks what the reference forwarder or the datapath made
// of them.
func (c *benchCase) setUp(b *testing.B, ns string) {
	spec := tgen.Spec{Direction: tgen.Uplink, Size: 20 + 8 + 64, GNB: addrGNB, UPF: addrN3, DN: addrDN,
		SrcMAC: macGNB, DstMAC: macN3}
	if c.dir == N3 {
		c.frame = uplink(tunnel{src: addrGNB, dst: addrN3, teid: teidUL, qfi: 9, pduType: 1}, upFlow)
	} else {
		f := downFlow
		f.dst = benchUE(0)
		c.frame = downlink(f)
		spec.Direction, spec.SrcMAC, spec.DstMAC = tgen.Downlink, macRouter, macN6
	}
	qfi := uint8(0) // downlink G-PDUs carry a QFI only with a QER
	if c.qos {
		qfi = 9
	}
	for i := range max(c.sessions, 1) {
		spec.Sessions = append(spec.Sessions, tgen.Session{UE: benchUE(i), UplinkTEID: teidUL + uint32(i), DownlinkTEID: teidDL + uint32(i), QFI: qfi})
	}
	// Traffic visits the sessions in an order of its own, not the order
	// they were installed in, which is the order of their slots: a packet
	// finds nothing in the caches that the previous one brought in.
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(spec.Sessions), func(i, j int) {
		spec.Sessions[i], spec.Sessions[j] = spec.Sessions[j], spec.Sessions[i]
	})
	path := tgen.UPF
	if c.ref || c.floor {
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
	if c.floor {
		c.empty, err = ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL",
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, int32(Dropped)), asm.Return()}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.empty.Close() })
		return
	}
	if c.ref {
		err = netns.Do(ns, func() (err error) {
			c.fwd, err = refs.Load(refs.Port{Name: "n3", Peer: macGNB}, refs.Port{Name: "n6", Peer: macRouter})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.fwd.Close() })
		return
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
// and with qos an MBR QER (100 Gbit/s, never reached) and a URR; with
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
			ops = append(ops, PutQER{ID: 1 + s, QER: QER{QFI: 9, MBRUplink: 100e9, MBRDownlink: 100e9}}, PutURR{ID: 1 + s, URR: URR{}})
			up.QERIDs, up.URRIDs = [2]uint32{1 + s}, [2]uint32{1 + s}
			down.QERIDs, down.URRIDs = [2]uint32{1 + s}, [2]uint32{1 + s}
		}
		if c.ueFilter {
			up.Filter, up.SDFID = SDF{Src: netip.PrefixFrom(benchUE(i), 32)}, 1+s
		}
		ups := []PDR{up}
		if c.pdrs > 1 {
			// pdrs-1 filters on ports no frame uses, then the catch-all.
			ups = nil
			for k := range c.pdrs - 1 {
				p := up
				p.ID, p.Filter = uint16(k+10), SDF{Proto: 6, DstPorts: PortRange{1, 1}}
				ups = append(ups, p)
			}
			ups = append(ups, up)
		}
		ops = append(ops,
			PutUplink{UplinkKey{teidUL + s, 0}, Rules{Session: s, PDRs: ups, ListID: 1 + s}},
			PutDownlink{netip.PrefixFrom(benchUE(i), 32), Rules{Session: s, PDRs: []PDR{down}}})
	}
	return ops
}

func (c *benchCase) program() *ebpf.Program {
	if c.floor {
		return c.empty
	}
	if c.ref {
		return c.fwd.Program()
	}
	return c.d.Program(c.dir)
}

func (c *benchCase) attach(ns string) error {
	return netns.Do(ns, func() (err error) {
		if c.floor {
			ifc, err := net.InterfaceByName("n3")
			if err != nil {
				return err
			}
			c.link, err = link.AttachXDP(link.XDPOptions{Program: c.empty, Interface: ifc.Index, Flags: link.XDPDriverMode})
			return err
		}
		if c.ref {
			return c.fwd.Attach()
		}
		return c.d.Attach(Native)
	})
}

func (c *benchCase) detach() error {
	if c.floor {
		return c.link.Close()
	}
	if c.ref {
		return c.fwd.Detach()
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
	if got.Packets < uint64(frames)*9/10 && !c.floor {
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

func printBench(cases []*benchCase) {
	ref := map[Role]*benchCase{}
	for _, c := range cases {
		if c.ref {
			ref[c.dir] = c
		}
	}
	w := os.Stdout
	fmt.Fprintf(w, "\n| case | prog.Run ns/pkt | x ref | in-kernel ns/pkt | x ref | Mpps | x ref |\n")
	fmt.Fprintf(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range cases {
		r := ref[c.dir]
		run, kern, mpps := median(c.runNS), median(c.kernNS), median(c.mpps)
		if c.floor {
			fmt.Fprintf(w, "| %s | %.1f | | %.1f | | | |\n", c.name, run, kern)
			continue
		}
		fmt.Fprintf(w, "| %s | %.1f | %.2f | %.1f | %.2f | %.2f | %.2f |\n", c.name,
			run, run/median(r.runNS), kern, kern/median(r.kernNS), mpps, mpps/median(r.mpps))
	}
	fmt.Fprintf(w, "\nMedians of %d rounds; each ratio is to the reference forwarder on the same direction's frame, same run.\n", len(cases[0].runNS))
}
