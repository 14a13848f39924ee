package tgen

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
)

// BenchmarkGenerator measures the generator, flat out, into the reference
// forwarder and the sink behind it, and prints the rate the sink counted
// (median of rounds) and each program's in-kernel time per frame:
//
//	go test -run '^$' -bench Generator -benchtime 1x ./lab/tgen
//
// Everything runs on the generator's CPU: a veth runs what it receives in
// the softirq of the CPU that sent it. So two more cases say where the time
// goes: the forwarder into a device that drops everything (no sink), and
// the generator straight into one (what a core makes when nothing else
// runs on it); and last, the path's own ceiling: a program that only says
// XDP_TX, through the forwarder, into XDP_DROP.
//
// Rates are measured with run-time statistics off; they cost clock reads
// on every program run, so the times per frame come from one more round
// with them on, next to what they make of an empty program.
func BenchmarkGenerator(b *testing.B) {
	testenv.RequirePrivileges(b)
	const rounds, frames = 5, 4 << 20
	type benchCase struct {
		name string
		spec Spec
		cpus []int
		to   string // "sink" (forwarder and sink), "drop" (forwarder, XDP_DROP), "" (XDP_DROP)
	}
	cases := []benchCase{
		{"downlink, 64 B, 1 worker", benchSpec(Downlink, 64), []int{0}, "sink"},
		{"uplink, 64 B, 1 worker", benchSpec(Uplink, 64), []int{0}, "sink"},
		{"uplink, IMIX, 1 worker", benchIMIX(Uplink), []int{0}, "sink"},
		{"downlink, 64 B, 2 workers", benchSpec(Downlink, 64), []int{0, 1}, "sink"},
		{"downlink, 64 B, 1 worker, forwarder into XDP_DROP", benchSpec(Downlink, 64), []int{0}, "drop"},
		{"downlink, 64 B, 1 worker, into XDP_DROP", benchSpec(Downlink, 64), []int{0}, ""},
	}
	w := os.Stdout
	fmt.Fprintf(w, "\n| case | Mpps counted | lost | generator ns/frame | forwarder ns/frame | sink ns/frame |\n")
	fmt.Fprintf(w, "| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range cases {
		ns := line(b, len(c.cpus))
		g, err := New(c.spec)
		if err != nil {
			b.Fatal(err)
		}
		progs := []*ebpf.Program{g.Program()} // and the forwarder's and the sink's
		var k *Sink
		switch c.to {
		case "sink":
			k = attachSink(b, ns, c.spec)
			progs = append(progs, reference(b, ns).Program(), k.Program())
		case "drop":
			dropAll(b, ns, "sink")
			progs = append(progs, reference(b, ns).Program())
		default:
			dropAll(b, ns, "fwd0")
		}
		var mpps []float64
		var lost uint64
		for range rounds {
			n, l, took := benchRound(b, g, k, ns, c.cpus, frames)
			mpps = append(mpps, float64(n)/took.Seconds()/1e6)
			lost += l
		}
		stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
		if err != nil {
			b.Fatal(err)
		}
		before := runStats(b, progs)
		benchRound(b, g, k, ns, c.cpus, frames)
		after := runStats(b, progs)
		stats.Close()
		slices.Sort(mpps)
		fmt.Fprintf(w, "| %s | %.2f | %d |", c.name, mpps[len(mpps)/2], lost)
		for i := range 3 {
			if i < len(progs) {
				fmt.Fprintf(w, " %.1f |", nsPerRun(before[i], after[i]))
			} else {
				fmt.Fprintf(w, " |")
			}
		}
		fmt.Fprintln(w)
		g.Close()
	}
	fmt.Fprintf(w, "| an empty XDP_TX program, forwarder into XDP_DROP | %.2f | | | | |\n", ceiling(b, frames))
	fmt.Fprintf(w, "\nMedians of %d rounds of %d frames a worker; lost is over all rounds.\n", rounds, frames)
	fmt.Fprintf(w, "Run-time statistics make an empty program %.1f ns/frame.\n", emptyNS(b))
}

func benchSpec(dir Direction, size int) Spec {
	s := testSpec(dir, false)
	s.Size = size
	return s
}

func benchIMIX(dir Direction) Spec {
	s := testSpec(dir, false)
	s.Mix = IMIX
	return s
}

// benchRound sends frames from each CPU, flat out, and returns how many the
// sink counted (without a sink: sent), how many were lost, and how long
// sending took.
func benchRound(b testing.TB, g *Generator, k *Sink, ns string, cpus []int, frames uint64) (uint64, uint64, time.Duration) {
	err := g.Reset()
	if k != nil {
		err = errors.Join(err, k.Reset())
	}
	if err != nil {
		b.Fatal(err)
	}
	res := run(b, g, ns, RunOptions{CPUs: cpus, Count: frames})
	if k == nil {
		return res.Total(), 0, res.Took
	}
	time.Sleep(20 * time.Millisecond) // let the last batch drain
	sent, _ := sentPerFlow(b, g)
	st, err := k.Stats(sent)
	if err != nil {
		b.Fatal(err)
	}
	return st.Packets, st.Lost, res.Took
}

// ceiling is the median rate of an empty XDP_TX program through the
// forwarder into XDP_DROP, on one CPU.
func ceiling(b *testing.B, frames uint32) float64 {
	ns := line(b, 1)
	reference(b, ns)
	dropAll(b, ns, "sink")
	tx := constProgram(b, 3) // XDP_TX
	g, err := New(benchSpec(Downlink, 64))
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	var mpps []float64
	onCPU(b, 0, func() {
		err = netns.Do(ns, func() error {
			ifc, err := net.InterfaceByName("gen")
			if err != nil {
				return err
			}
			for range 5 {
				start := time.Now()
				if err := progRun(tx, g.frame, ifc.Index, frames); err != nil {
					return err
				}
				mpps = append(mpps, float64(frames)/time.Since(start).Seconds()/1e6)
			}
			return nil
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	slices.Sort(mpps)
	return mpps[len(mpps)/2]
}

// dropAll puts an XDP program that drops everything on dev.
func dropAll(b *testing.B, ns, dev string) {
	prog := constProgram(b, 1) // XDP_DROP
	err := netns.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		l, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifc.Index})
		if err == nil {
			b.Cleanup(func() { l.Close() })
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

func constProgram(b *testing.B, verdict int32) *ebpf.Program {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, verdict), asm.Return()}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { prog.Close() })
	return prog
}

// emptyNS is what run-time statistics make of a program that does nothing.
func emptyNS(b *testing.B) float64 {
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		b.Fatal(err)
	}
	defer stats.Close()
	prog := constProgram(b, 1)
	before := runStats(b, []*ebpf.Program{prog})
	if _, _, err := prog.Benchmark(make([]byte, 64), 1<<20, nil); err != nil {
		b.Fatal(err)
	}
	return nsPerRun(before[0], runStats(b, []*ebpf.Program{prog})[0])
}

func runStats(b *testing.B, progs []*ebpf.Program) []*ebpf.ProgramStats {
	var out []*ebpf.ProgramStats
	for _, p := range progs {
		s, err := p.Stats()
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func nsPerRun(before, after *ebpf.ProgramStats) float64 {
	runs := after.RunCount - before.RunCount
	if runs == 0 {
		return 0
	}
	return float64(after.Runtime-before.Runtime) / float64(runs)
}
