package runner

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/tgen"
	"github.com/sluice-upf/sluice/lab/topo"
)

// The parts of a run on their own, for `upflab gen`, `upflab sink` and
// `upflab cbr`: the same frames, ends, rates and cbr step as a scenario's,
// in a lab that is already up.

// Traffic is one direction of the lab's traffic.
type Traffic struct {
	Direction scenario.Direction  // Uplink or Downlink
	Mix       []scenario.Weighted // payload bytes and shares; one entry for one size
	Sessions  []tgen.Session
	Flows     int // per session; 0 means 1
}

func (t Traffic) load(path tgen.Path) load {
	return load{dir: t.Direction, mix: t.Mix, sessions: t.Sessions, flows: t.Flows, path: path}
}

// Spec is what the generator and the sink of this traffic are made from.
func (t Traffic) Spec() tgen.Spec { return t.load(tgen.UPF).spec() }

// Ends are where the generator sends from and where the sink counts.
func (t Traffic) Ends(lab topo.Lab) (genNS, genDev, sinkNS, sinkDev string) {
	return t.load(tgen.UPF).ends(lab)
}

// PacketsPerSecond is r for this traffic's frames; 0 is flat out.
func (t Traffic) PacketsPerSecond(r scenario.Rate) float64 { return t.load(tgen.UPF).offered(r) }

// FrameOverhead is what a frame adds to its inner IP packet as sent (tx)
// and as it arrives after path (rx): Ethernet, and a G-PDU where there is
// a tunnel on that side.
func (t Traffic) FrameOverhead(path tgen.Path) (tx, rx int) {
	return t.load(path).frameOverhead()
}

// CBR runs a cbr step through what is in lab's UPF namespace (path says
// what that is), as a scenario's cbr step does, calling each with every
// size's result as it comes.
func CBR(ctx context.Context, lab topo.Lab, t Traffic, path tgen.Path, c scenario.CBR, each func(report.CBR)) ([]report.CBR, error) {
	return cbrSweep(ctx, newMeasurer(lab, 0), t, path, c, each)
}

// pacedWorkerPPS is the rate one generator worker keeps up on the lab's
// veths: 2.94 Mpps of 3 asked, through the reference forwarder.
const pacedWorkerPPS = 3e6

// Workers are the CPUs, of cpus, best to run a generator on that sends
// flows flows at pps (0: flat out): flat out, all of them; at a set rate,
// the fewest that keep it up. A worker at a set rate spins its core
// between frames, and the UPF and the sink need the cores too: on two
// cores, two workers at 100 kpps in all sent 66 to 85 kpps, one 99 kpps.
// Never more workers than flows, as each worker owns some of them.
func Workers(cpus []int, pps float64, flows int) []int {
	n := len(cpus)
	if pps > 0 {
		n = min(n, int(math.Ceil(pps/pacedWorkerPPS)))
	}
	return cpus[:max(min(n, flows), 1)]
}

// AttachReference puts the reference forwarder on the UPF's n3 and n6
// until the returned Closer is closed. The UPF's namespace must have no
// XDP program there.
func AttachReference(lab topo.Lab) (io.Closer, error) {
	f, err := attachReference(lab)
	if err != nil {
		return nil, fmt.Errorf("%w (is a UPF running in %s? `upflab topo show --name %s` lists the XDP programs)", err, lab.UPF, lab.Name)
	}
	return f, nil
}
