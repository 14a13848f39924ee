package tgen

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/refs"
)

// line is a namespace where frames leave the generator on gen, cross a
// forwarder from fwd0 to fwd1, and reach the sink on sink:
//
//	gen ==veth== fwd0  [forwarder]  fwd1 ==veth== sink
//
// MTU 1600, so that a 1500-byte packet fits in a G-PDU. With several
// queues a veth takes a frame on the queue of the CPU that sends it, so
// that each worker's frames stay on its CPU all the way.
func line(t testing.TB, queues int) string {
	t.Helper()
	ns := testenv.Namespace(t, "sluice-tgen")
	ip := func(args ...string) { testenv.Sh(t, append([]string{"ip", "-n", ns}, args...)...) }
	q := []string{"numtxqueues", fmt.Sprint(queues), "numrxqueues", fmt.Sprint(queues)}
	for _, pair := range [][2]string{{"gen", "fwd0"}, {"fwd1", "sink"}} {
		ip(slices.Concat([]string{"link", "add", "name", pair[0]}, q, []string{"type", "veth", "peer", "name", pair[1]}, q)...)
	}
	for _, d := range []string{"gen", "fwd0", "fwd1", "sink"} {
		ip("link", "set", "dev", d, "mtu", "1600", "up")
	}
	return ns
}

// reference puts the reference forwarder between fwd0 and fwd1.
func reference(t testing.TB, ns string) *refs.Forwarder {
	t.Helper()
	var f *refs.Forwarder
	err := netns.Do(ns, func() error {
		gen, err := net.InterfaceByName("gen")
		if err != nil {
			return err
		}
		sink, err := net.InterfaceByName("sink")
		if err != nil {
			return err
		}
		if f, err = refs.Load(refs.Port{Name: "fwd0", Peer: gen.HardwareAddr}, refs.Port{Name: "fwd1", Peer: sink.HardwareAddr}); err != nil {
			return err
		}
		return f.Attach()
	})
	if err != nil {
		t.Fatalf("reference forwarder: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func attachSink(t testing.TB, ns string, s Spec) *Sink {
	t.Helper()
	k, err := NewSink(s, Wire)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	if err := k.Attach(ns, "sink"); err != nil {
		t.Fatal(err)
	}
	return k
}

// run sends with g out of gen, bounded by a minute whatever o says.
func run(t testing.TB, g *Generator, ns string, o RunOptions) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o.Namespace, o.Device = ns, "gen"
	res, err := g.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Below saturation, through the reference forwarder, every frame the
// generator counts reaches the sink, valid, once, in order.
func TestPrivilegedExactCounts(t *testing.T) {
	ns := line(t, 1)
	reference(t, ns)
	for _, c := range []struct {
		name string
		spec func() Spec
		opts RunOptions
	}{
		{"uplink, two workers at a rate", func() Spec { return testSpec(Uplink, false) }, RunOptions{CPUs: []int{0, 1}, Count: 15000, Rate: 100_000}},
		{"downlink, IMIX", func() Spec { s := testSpec(Downlink, false); s.Mix = IMIX; return s }, RunOptions{CPUs: []int{0, 1}, Count: 12000, Rate: 100_000}},
		{"uplink over IPv6", func() Spec { return testSpec(Uplink, true) }, RunOptions{CPUs: []int{1}, Count: 15000, Rate: 100_000}},
		{"downlink, one worker flat out", func() Spec { return testSpec(Downlink, false) }, RunOptions{CPUs: []int{0}, Count: 3000}}, // alone: batches do not mix
	} {
		t.Run(c.name, func(t *testing.T) {
			s := c.spec()
			g := newGenerator(t, s)
			k := attachSink(t, ns, s)
			dropsBefore, err := XmitErrors(ns, "fwd1")
			if err != nil {
				t.Fatal(err)
			}
			res := run(t, g, ns, c.opts)
			for w, n := range res.Sent {
				if n != c.opts.Count {
					t.Errorf("worker %d sent %d frames, want %d", w, n, c.opts.Count)
				}
			}
			sent, total := sentPerFlow(t, g)
			if total != res.Total() {
				t.Errorf("the flows were sent %d frames, the workers %d", total, res.Total())
			}
			// The one loss the test allows is a device's own, gen's or
			// the forwarder's fwd1: its peer's ring full because the
			// machine was too busy to drain it. The devices count those
			// frames; they must be exactly the ones the sink finds lost.
			st := waitFor(t, k, sent, res.Total()-res.NotTaken)
			dropsAfter, err := XmitErrors(ns, "fwd1")
			if err != nil {
				t.Fatal(err)
			}
			notTaken := res.NotTaken + dropsAfter - dropsBefore
			taken := res.Total() - notTaken
			if c.opts.Rate == 0 && notTaken+st.Lost > 0 {
				t.Logf("flat out: %d frames not taken by gen, %d by the forwarder, %d lost in all", res.NotTaken, notTaken-res.NotTaken, st.Lost)
				return
			}
			if notTaken > 0 {
				t.Logf("the devices refused %d frames (gen %d), their peers too busy to take them", notTaken, res.NotTaken)
			}
			// At a rate every frame's latency is taken (but for the rare
			// frame stamped in the same nanosecond as the one before it),
			// flat out the first of each batch's.
			lat, want := st.Latency.Count, taken
			if c.opts.Rate == 0 {
				want = (res.Total() + 63) / 64
			}
			if st.Packets != taken || st.Unique != taken || st.Lost != notTaken || st.Duplicates+st.Reordered != 0 ||
				len(st.Invalid) != 0 || lat > want || lat < want-want/1000 || (notTaken == 0 && st.Bytes != res.Bytes) {
				t.Errorf("sent %+v; sink saw %d packets (%d bytes), %d unique, %d lost, %d duplicates, %d reordered, invalid %v, latency %+v",
					res, st.Packets, st.Bytes, st.Unique, st.Lost, st.Duplicates, st.Reordered, st.Invalid, st.Latency)
			}
			if n, err := k.Received(); err != nil || n != st.Packets {
				t.Errorf("Received gives %d (%v), Stats %d packets", n, err, st.Packets)
			}
			// The workers' cores cannot give the run more time than
			// it took, each (the ksoftirqd reads bracket the run: a
			// few milliseconds' slack).
			most := time.Duration(len(res.Sent))*res.Took + 10*time.Millisecond
			if res.CoreTime <= 0 || res.CoreTime > most {
				t.Errorf("core time %v of a run of %v on %d cores", res.CoreTime, res.Took, len(res.Sent))
			}
			var short uint64
			for f, fs := range st.Flows {
				short += sent[f] - fs.Unique
			}
			if short != notTaken {
				for f, fs := range st.Flows {
					t.Errorf("flow %d: %d of %d", f, fs.Unique, sent[f])
				}
			}
		})
	}
}

// waitFor reads the sink until it has counted n frames, or a second has
// passed since the last one came.
func waitFor(t *testing.T, k *Sink, sent []uint64, n uint64) Stats {
	t.Helper()
	var last uint64
	for idle := 0; idle < 100; idle++ {
		st := stats(t, k, sent)
		seen := st.Packets
		for _, c := range st.Invalid {
			seen += c
		}
		if seen >= n {
			return st
		}
		if seen != last {
			idle, last = 0, seen
		}
		time.Sleep(10 * time.Millisecond)
	}
	return stats(t, k, sent)
}

// A forwarder that loses, duplicates and swaps known frames: the sink
// finds each of them, in the right flow, and nothing else.
func TestPrivilegedInjectedFaults(t *testing.T) {
	ns := line(t, 1)
	testenv.AttachPass(t, ns, "fwd0") // a veth takes redirected frames only with NAPI on: XDP, then tc
	swap := func(flow uint32, seq uint64) []fault {
		return []fault{{flow, seq, reseq, seq + 1}, {flow, seq + 1, reseq, seq}}
	}
	faults := [][]fault{
		{{0, 10, lose, 0}, {0, 11, lose, 0}, {0, 20, twice, 0}}, swap(0, 30),
		{{3, 0, twice, 0}, {3, 120, lose, 0}, {3, 199, lose, 0}}, swap(3, 100), swap(3, 150),
		{{5, 50, twice, 0}, {5, 51, twice, 0}, {5, 52, lose, 0}},
	}
	var all []fault
	want := map[uint32]*FlowStats{}
	for _, fs := range faults {
		for _, f := range fs {
			all = append(all, f)
			w := want[f.flow]
			if w == nil {
				w = &FlowStats{}
				want[f.flow] = w
			}
			switch f.what {
			case lose:
				w.Lost++
			case twice:
				w.Duplicates++
			case reseq:
				if f.to < f.seq { // the second of a swapped pair arrives late
					w.Reordered++
				}
			}
		}
	}
	attachLossy(t, ns, "fwd0", "fwd1", all)

	s := testSpec(Downlink, false)
	g := newGenerator(t, s)
	k := attachSink(t, ns, s)
	// Two workers, three flows each: 200 frames a flow.
	res := run(t, g, ns, RunOptions{CPUs: []int{0, 1}, Count: 600, Rate: 50_000})
	sent, _ := sentPerFlow(t, g)
	st := waitFor(t, k, sent, res.Total()-5+4) // 5 lost, 4 twice
	if len(st.Invalid) != 0 {
		t.Errorf("invalid frames: %v", st.Invalid)
	}
	for f, fs := range st.Flows {
		w := FlowStats{}
		if want[uint32(f)] != nil {
			w = *want[uint32(f)]
		}
		got := FlowStats{Lost: fs.Lost, Duplicates: fs.Duplicates, Reordered: fs.Reordered}
		if got != w || fs.Late != 0 || fs.Expected != 200 {
			t.Errorf("flow %d: %+v of %d, want %+v", f, got, fs.Expected, w)
		}
	}
	if st.Lost != 5 || st.Duplicates != 4 || st.Reordered != 3 {
		t.Errorf("in all %d lost, %d duplicates, %d reordered; want 5, 4, 3", st.Lost, st.Duplicates, st.Reordered)
	}
}

// A run without a count ends with its context, and what it sent arrives.
func TestPrivilegedRunUntilDone(t *testing.T) {
	ns := line(t, 1)
	reference(t, ns)
	s := testSpec(Uplink, false)
	g := newGenerator(t, s)
	k := attachSink(t, ns, s)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := g.Run(ctx, RunOptions{Namespace: ns, Device: "gen", Rate: 20_000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total() == 0 {
		t.Fatalf("sent %+v: want a run that sends until its context ends", res)
	}
	sent, _ := sentPerFlow(t, g)
	if st := waitFor(t, k, sent, res.Total()); st.Unique != res.Total() || st.Lost != 0 {
		t.Errorf("sent %d, the sink saw %d unique, %d lost", res.Total(), st.Unique, st.Lost)
	}
}
