package gnb

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/lab/cpu"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/tgen"
	"github.com/sluice-upf/sluice/lab/topo"
)

// BenchmarkRealUEs measures real UEs through upfd: a thousand sessions
// from the SMF emulator, iperf3 TCP from several UEs at once (each its own
// client and server), uplink then downlink, through the tunnel with each
// uplink program and beside it the ceiling (the same UEs joined straight
// to the DN). It prints a table of goodput and of the gNB's cost:
//
//	go test -run '^$' -bench RealUEs -benchtime 1x ./lab/gnb
//
// SLUICE_UES=1,8,16 sets how many UEs send at once, SLUICE_SECONDS=5 how
// long each measurement runs.
func BenchmarkRealUEs(b *testing.B) {
	counts := []int{1, 8, 16}
	if s := os.Getenv("SLUICE_UES"); s != "" {
		counts = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				b.Fatalf("SLUICE_UES=%s: want counts such as 1,8,16", s)
			}
			counts = append(counts, n)
		}
	}
	d := 5 * time.Second
	if n, err := strconv.Atoi(os.Getenv("SLUICE_SECONDS")); err == nil && n > 0 {
		d = time.Duration(n) * time.Second
	}
	const sessions = 1000
	lab := testLab(b)
	g := newGNB(b, lab, establish(b, lab, smf.Plain, sessions), Options{})
	stats, err := RunTimeStats()
	if err != nil {
		b.Fatal(err)
	}
	defer stats.Close()
	floor, err := statsFloor(g)
	if err != nil {
		b.Fatal(err)
	}
	most := counts[0]
	for _, n := range counts {
		most = max(most, n)
	}
	for i := range most {
		serveIperf(b, lab, topo.DNHost, 5201+i)
	}
	var rows []benchRow
	for _, path := range []struct {
		name   string
		uplink Uplink
		direct bool
	}{{"tunnel, uplink XDP", UplinkXDP, false}, {"tunnel, uplink TC", UplinkTC, false}, {"ceiling: direct", UplinkXDP, true}} {
		if err := g.Detach(); err != nil {
			b.Fatal(err)
		}
		g.uplink = path.uplink
		if err := g.Attach(); err != nil {
			b.Fatal(err)
		}
		p := Tunnel
		if path.direct {
			p = Direct
		}
		if err := g.Use(p); err != nil {
			b.Fatal(err)
		}
		for _, n := range counts {
			for _, reverse := range []bool{false, true} {
				r, err := measure(g, n, d, reverse)
				if err != nil {
					b.Fatal(err)
				}
				r.path = path.name
				rows = append(rows, r)
				b.Logf("%s, %d UEs, %s: %.2f Gbit/s", r.path, r.ues, r.dir(), r.gbps)
			}
		}
	}
	printRows(rows, sessions, d, floor)
}

// statsFloor is what run-time statistics make of a run of a program that
// does nothing (xdp_gnb_ue): the clock reads they add to every figure.
func statsFloor(g *GNB) (time.Duration, error) {
	before, err := g.objs.XdpGnbUe.Stats()
	if err != nil {
		return 0, err
	}
	if _, _, err := g.objs.XdpGnbUe.Benchmark(make([]byte, 64), 1<<20, nil); err != nil {
		return 0, err
	}
	after, err := g.objs.XdpGnbUe.Stats()
	if err != nil {
		return 0, err
	}
	return (after.Runtime - before.Runtime) / time.Duration(after.RunCount-before.RunCount), nil
}

type benchRow struct {
	path      string
	ues       int
	downlink  bool
	gbps      float64 // what the receivers got, all UEs together
	retrans   uint64
	cost      Cost // the gNB's programs over the measurement
	elapsed   time.Duration
	busy      float64 // the machine's cores together, percent of one
	softirq   float64
	drops     [3]uint64 // frames full rings refused: the gNB's, the UPF's, the stacks' (ringDrops)
	perUEMbps []float64
}

func (r benchRow) dir() string {
	if r.downlink {
		return "downlink"
	}
	return "uplink"
}

// measure runs iperf3 from n UEs spread over the thousand at once, for d.
func measure(g *GNB, n int, d time.Duration, reverse bool) (benchRow, error) {
	r := benchRow{ues: n, downlink: reverse, perUEMbps: make([]float64, n)}
	before, err := g.Cost()
	if err != nil {
		return r, err
	}
	dropsBefore, err := ringDrops(g)
	if err != nil {
		return r, err
	}
	sample, err := cpu.Start()
	if err != nil {
		return r, err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, n)
	sums := make([]iperfSum, n)
	for i := range n {
		ue := g.ues[i*len(g.ues)/n]
		wg.Go(func() { sums[i], errs[i] = runIperf(g, ue.Addr, topo.DNHost, 5201+i, d, reverse) })
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	usage, err := sample.Stop()
	if err != nil {
		return r, err
	}
	after, err := g.Cost()
	if err != nil {
		return r, err
	}
	dropsAfter, err := ringDrops(g)
	if err != nil {
		return r, err
	}
	for i := range r.drops {
		r.drops[i] = dropsAfter[i] - dropsBefore[i]
	}
	if err := errors.Join(errs...); err != nil {
		return r, err
	}
	for i, s := range sums {
		r.gbps += s.BitsPerSecond / 1e9
		r.retrans += s.Retransmits
		r.perUEMbps[i] = s.BitsPerSecond / 1e6
	}
	r.cost = after.Sub(before)
	for _, c := range usage.Cores {
		r.busy += c.Busy
	}
	r.softirq = usage.Softirq()
	return r, nil
}

// ringDrops are the frames that veths of the path refused because the
// ring of their peer was full: XDP redirected into the gNB's n3 or gnbue,
// or sent out of the gNB's n3 (TC); redirected by the UPF into its n3 or
// n6; sent by the UEs' stacks out of ue0 and the DN's out of its n6.
func ringDrops(g *GNB) ([3]uint64, error) {
	var d [3]uint64
	for _, x := range []struct {
		who     int
		ns, dev string
		xdp     bool // redirected into dev, else sent out of it
	}{
		{0, g.lab.GNB, DevGNBUE, true}, {0, g.lab.GNB, topo.DevN3, true}, {0, g.lab.GNB, topo.DevN3, false},
		{1, g.lab.UPF, topo.DevN3, true}, {1, g.lab.UPF, topo.DevN6, true},
		{2, g.ns, DevUE, false}, {2, g.lab.DN, topo.DevN6, false},
	} {
		var n uint64
		var err error
		if x.xdp {
			n, err = tgen.XmitErrors(x.ns, x.dev)
		} else {
			n, err = txDropped(x.ns, x.dev)
		}
		if err != nil {
			return d, err
		}
		d[x.who] += n
	}
	return d, nil
}

func txDropped(ns, dev string) (uint64, error) {
	out, err := command("ip", "-n", ns, "-j", "-s", "link", "show", "dev", dev)
	if err != nil {
		return 0, err
	}
	var links []struct {
		Stats struct {
			TX struct {
				Dropped uint64 `json:"dropped"`
			} `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		return 0, fmt.Errorf("ip -j -s link show %s: %v", dev, err)
	}
	return links[0].Stats.TX.Dropped, nil
}

func printRows(rows []benchRow, sessions int, d time.Duration, floor time.Duration) {
	w := os.Stdout
	fmt.Fprintf(w, "\n| path | UEs | direction | goodput Gbit/s | x ceiling | retransmits | gNB uplink ns/pkt | gNB downlink ns/pkt | gNB Mpps | gNB %% of a CPU | machine busy %% (softirq) | full rings: gNB / UPF / stacks |\n")
	fmt.Fprintf(w, "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	ceiling := map[string]float64{}
	for _, r := range rows {
		if strings.HasPrefix(r.path, "ceiling") {
			ceiling[fmt.Sprint(r.ues, r.downlink)] = r.gbps
		}
	}
	for _, r := range rows {
		x := ""
		if c := ceiling[fmt.Sprint(r.ues, r.downlink)]; c > 0 && !strings.HasPrefix(r.path, "ceiling") {
			x = fmt.Sprintf("%.2f", r.gbps/c)
		}
		total := r.cost.Uplink.add(r.cost.Downlink)
		fmt.Fprintf(w, "| %s | %d | %s | %.2f | %s | %d | %.0f | %.0f | %.3f | %.1f | %.0f (%.0f) | %d / %d / %d |\n",
			r.path, r.ues, r.dir(), r.gbps, x, r.retrans,
			float64(r.cost.Uplink.PerRun()), float64(r.cost.Downlink.PerRun()),
			float64(total.Runs)/r.elapsed.Seconds()/1e6, Share(r.cost.Total().Time, r.elapsed), r.busy, r.softirq,
			r.drops[0], r.drops[1], r.drops[2])
	}
	fmt.Fprintf(w, "\n%d sessions (plain profile) through upfd, iperf3 TCP for %v per row, each UE its own client and server. "+
		"gNB figures are BPF run-time statistics of its programs (each direction carries data one way and ACKs the other; "+
		"%% of a CPU counts the pass program on ue0 too), not the veths' work around them; "+
		"they count %d ns a run for a program that does nothing. Full rings: frames a veth refused because its peer's ring was full, "+
		"those the gNB sent, the UPF sent, the UEs' and the DN's stacks sent.\n", sessions, d, floor.Nanoseconds())
}
