package tgen

import (
	"errors"
	"fmt"
	"net"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/sluice-upf/sluice/internal/netns"
)

// Path is what stands between the generator and the sink, and so what a
// valid frame looks like when it arrives.
type Path uint8

const (
	// UPF: uplink arrives decapsulated; downlink arrives as a G-PDU with
	// the session's downlink TEID and a DL PDU Session Container with its
	// QFI.
	UPF Path = iota
	// Wire: a forwarder that changes nothing past the MACs; frames
	// arrive as sent.
	Wire
)

// SinkProgram is the name of the sink's XDP program, as the kernel lists
// the programs attached to a device: how the generator sees a sink there.
const SinkProgram = "xdp_sink"

// Sink checks and counts what arrives on a device.
type Sink struct {
	spec Spec
	objs sinkObjects
	link link.Link
}

// NewSink loads a sink for the traffic of spec after path.
func NewSink(spec Spec, path Path) (*Sink, error) {
	if err := spec.validate(); err != nil {
		return nil, fmt.Errorf("tgen: sink: %w", err)
	}
	// A G-PDU arrives where uplink left without a UPF, or downlink with one.
	encap := (spec.Direction == Uplink) == (path == Wire)
	cs, err := loadSink()
	if err != nil {
		return nil, err
	}
	cs.Maps["sessions"].MaxEntries = uint32(len(spec.Sessions))
	cs.Maps["flows"].MaxEntries = uint32(spec.FlowCount())
	err = setVariables(cs, map[string]any{
		"cfg_encap":    encap,
		"cfg_pdu_type": spec.Direction == Uplink, // PSC_UL is 1
		"cfg_dl_teid":  spec.Direction == Downlink,
		"cfg_ue_dst":   spec.Direction == Downlink,
		"cfg_inner":    ipVersion(spec.Sessions[0].UE.Is4()),
	})
	if err != nil {
		return nil, fmt.Errorf("tgen: sink: %w", err)
	}
	s := &Sink{spec: spec}
	if err := cs.LoadAndAssign(&s.objs, nil); err != nil {
		return nil, fmt.Errorf("tgen: load sink: %w", err)
	}
	keys, vals := spec.sessionTable()
	sinkVals := make([]sinkLabSession, len(vals))
	for i, v := range vals {
		sinkVals[i] = sinkLabSession(v)
	}
	if err := errors.Join(putAll(s.objs.Sessions, keys, sinkVals), s.Reset()); err != nil {
		s.objs.Close()
		return nil, fmt.Errorf("tgen: sink sessions: %w", err)
	}
	return s, nil
}

// Attach puts the sink on dev in namespace ns, in native mode.
//
// The sink keeps each flow's state without a lock, so frames of one flow
// must not reach it on two CPUs at once. They do not on a device with one
// rx queue, whose NAPI runs the sink serially (generic XDP would run it
// wherever a frame is received: hence native mode). Nor on a veth with a
// queue per CPU fed by the generator's workers: a veth queues a frame on
// the sending CPU's queue, and each worker owns its flows on its CPU.
func (s *Sink) Attach(ns, dev string) error {
	if s.link != nil {
		return errors.New("tgen: sink already attached")
	}
	err := netns.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		s.link, err = link.AttachXDP(link.XDPOptions{Program: s.objs.XdpSink, Interface: ifc.Index, Flags: link.XDPDriverMode})
		return err
	})
	if err != nil {
		return fmt.Errorf("tgen: attach sink to %s: %w", dev, err)
	}
	return nil
}

// Program is the sink's XDP program.
func (s *Sink) Program() *ebpf.Program { return s.objs.XdpSink }

// Reset forgets everything counted.
func (s *Sink) Reset() error {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	keys, at := s.spec.flowTable()
	flows := make([]sinkSinkFlow, len(keys))
	for i := range flows {
		flows[i].At = sinkLabFlow(at[i])
	}
	return errors.Join(
		putAll(s.objs.Flows, keys, flows),
		s.objs.Totals.Put(uint32(0), make([]sinkSinkTotals, n)),
		s.objs.Latency.Put(uint32(0), make([]sinkSinkHist, n)))
}

// Detach takes the sink off its device; what it counted stays.
func (s *Sink) Detach() error {
	if s.link == nil {
		return nil
	}
	err := s.link.Close()
	s.link = nil
	return err
}

// Close detaches and releases the sink.
func (s *Sink) Close() error { return errors.Join(s.Detach(), s.objs.Close()) }
