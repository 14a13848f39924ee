package gnb

import (
	"fmt"
	"io"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// Traffic is what went through the tunnels: the UEs' IP packets and their
// bytes (from the IP header on, tunnel not counted, as a URR counts them).
type Traffic struct {
	UplinkPackets, UplinkBytes     uint64
	DownlinkPackets, DownlinkBytes uint64
}

func (t *Traffic) add(c gnbGnbUeCounters) {
	t.UplinkPackets += c.UlPackets
	t.UplinkBytes += c.UlBytes
	t.DownlinkPackets += c.DlPackets
	t.DownlinkBytes += c.DlBytes
}

// Counters are what the gNB's programs counted since New, summed over the
// CPUs.
type Counters struct {
	UEs   []Traffic // by UE, in the order of Options.Sessions
	Total Traffic   // the UEs' together
	// Frames not carried: from no UE (ARP, ND) passed to the gNB's
	// kernel; a UE's whose IP length lied; on n3, anything but a G-PDU
	// of a session's TEID (ARP, GTP-U Echo, other TEIDs) passed to the
	// kernel; G-PDUs of ours that held no IP packet or whose length lied.
	UplinkPassed, UplinkDropped     uint64
	DownlinkPassed, DownlinkDropped uint64
}

// Counters reads the counters.
func (g *GNB) Counters() (Counters, error) {
	c := Counters{UEs: make([]Traffic, len(g.ues))}
	var perCPU []gnbGnbUeCounters
	for i := range g.ues {
		if err := g.objs.GnbUes.Lookup(uint32(i), &perCPU); err != nil {
			return Counters{}, fmt.Errorf("gnb: counters of UE %d: %w", i, err)
		}
		for _, v := range perCPU {
			c.UEs[i].add(v)
			c.Total.add(v)
		}
	}
	var others []gnbGnbOthers
	if err := g.objs.GnbOthers.Lookup(uint32(0), &others); err != nil {
		return Counters{}, fmt.Errorf("gnb: counters: %w", err)
	}
	for _, o := range others {
		// enum gnb_other's order
		c.UplinkPassed += o.Frames[0]
		c.UplinkDropped += o.Frames[1]
		c.DownlinkPassed += o.Frames[2]
		c.DownlinkDropped += o.Frames[3]
	}
	return c, nil
}

// RunTimeStats turns on the kernel's BPF run-time statistics, which Cost
// reads, until the Closer is closed. They cost every BPF program of the
// machine two clock reads a run (some 20-40 ns), the UPF's too: turn them
// on for a measurement, not for a run whose figures are compared.
func RunTimeStats() (io.Closer, error) {
	c, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		return nil, fmt.Errorf("gnb: BPF run-time statistics: %w", err)
	}
	return c, nil
}

// Cost is the CPU time the gNB's programs took, as the kernel's BPF
// run-time statistics count it while they are on (RunTimeStats): the
// programs alone, not the veths' work around them.
type Cost struct {
	Uplink   ProgramCost // xdp_gnb_ul or tc_gnb_ul on gnbue
	Downlink ProgramCost // xdp_gnb_dl on the gNB's n3
	UE       ProgramCost // xdp_gnb_ue on ue0, which only passes
}

// ProgramCost is one program's runs and their time.
type ProgramCost struct {
	Runs uint64
	Time time.Duration
}

// PerRun is the time of a run on average: of a packet.
func (p ProgramCost) PerRun() time.Duration {
	if p.Runs == 0 {
		return 0
	}
	return p.Time / time.Duration(p.Runs)
}

func (p ProgramCost) sub(q ProgramCost) ProgramCost {
	return ProgramCost{Runs: p.Runs - q.Runs, Time: p.Time - q.Time}
}

func (p ProgramCost) add(q ProgramCost) ProgramCost {
	return ProgramCost{Runs: p.Runs + q.Runs, Time: p.Time + q.Time}
}

// Total is the programs' together.
func (c Cost) Total() ProgramCost { return c.Uplink.add(c.Downlink).add(c.UE) }

// Sub is what was spent since before.
func (c Cost) Sub(before Cost) Cost {
	return Cost{Uplink: c.Uplink.sub(before.Uplink), Downlink: c.Downlink.sub(before.Downlink), UE: c.UE.sub(before.UE)}
}

// Share is the part of one CPU that t took over elapsed, in percent.
func Share(t time.Duration, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return 100 * float64(t) / float64(elapsed)
}

// Cost reads the programs' run-time statistics, totals since they were
// loaded.
func (g *GNB) Cost() (Cost, error) {
	var c Cost
	for _, p := range []struct {
		to   *ProgramCost
		prog *ebpf.Program
	}{
		{&c.Uplink, g.objs.XdpGnbUl}, {&c.Uplink, g.objs.TcGnbUl},
		{&c.Downlink, g.objs.XdpGnbDl}, {&c.UE, g.objs.XdpGnbUe},
	} {
		s, err := p.prog.Stats()
		if err != nil {
			return Cost{}, fmt.Errorf("gnb: run-time statistics: %w", err)
		}
		*p.to = p.to.add(ProgramCost{Runs: s.RunCount, Time: s.Runtime})
	}
	return c, nil
}
