// Package tgen generates traffic with XDP live frames and counts it at the
// far side: the lab's generator and sink.
//
// A Generator sends copies of one template frame out of a device with
// BPF_PROG_RUN in live-frame mode, optionally varying one 32-bit field
// (a TEID, an address) per frame to cycle over sessions. A Sink attached to
// the receiving device counts what arrives and drops it.
package tgen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/netns"
)

// Vary says which field of the frame to change per frame.
type Vary struct {
	Offset   int // of a 32-bit big-endian field, after the Ethernet header start
	Count    int // values: the template's, +1, ... +Count-1
	Checksum int // offset of an IPv4 header checksum covering it, 0 = none
}

// Generator sends one kind of frame.
type Generator struct {
	objs  tgenObjects
	frame []byte
}

const tmplBytes = 8 * 16

// NewGenerator loads a generator for frame, restoring its first 128 bytes
// (or all of it, if shorter) for every frame sent.
func NewGenerator(frame []byte, vary *Vary) (*Generator, error) {
	if len(frame) < 14 {
		return nil, fmt.Errorf("tgen: a %d-byte frame is shorter than Ethernet", len(frame))
	}
	spec, err := loadTgen()
	if err != nil {
		return nil, err
	}
	var tmpl [16]uint64
	var padded [tmplBytes]byte
	n := copy(padded[:], frame)
	for i := range tmpl {
		tmpl[i] = binary.NativeEndian.Uint64(padded[8*i:])
	}
	consts := map[string]any{
		"cfg_tmpl":       tmpl,
		"cfg_tmpl_words": uint32(n / 8),
	}
	if vary != nil {
		if vary.Offset+4 > min(n, 128) || vary.Checksum+2 > min(n, 128) {
			return nil, fmt.Errorf("tgen: varied field at %d or checksum at %d outside the first %d bytes", vary.Offset, vary.Checksum, min(n, 128))
		}
		consts["cfg_vary_off"] = uint32(vary.Offset)
		consts["cfg_vary_count"] = uint32(vary.Count)
		consts["cfg_csum_off"] = uint32(vary.Checksum)
	}
	for name, v := range consts {
		if err := spec.Variables[name].Set(v); err != nil {
			return nil, fmt.Errorf("tgen: set %s: %w", name, err)
		}
	}
	g := &Generator{frame: frame}
	if err := spec.LoadAndAssign(&g.objs, nil); err != nil {
		return nil, fmt.Errorf("tgen: load: %w", err)
	}
	return g, nil
}

// Close releases the generator.
func (g *Generator) Close() error { return g.objs.Close() }

// Run sends count frames out of dev in namespace ns from one CPU, as fast as
// the path takes them, and returns how long that took. One long call: each
// BPF_PROG_RUN has a large fixed cost.
func (g *Generator) Run(ns, dev string, cpu int, count uint32) (time.Duration, error) {
	var took time.Duration
	err := netns.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("pin to cpu %d: %w", cpu, err)
		}
		start := time.Now()
		_, err = g.objs.XdpTgen.Run(&ebpf.RunOptions{
			Data:    g.frame,
			Repeat:  count,
			Flags:   unix.BPF_F_TEST_XDP_LIVE_FRAMES,
			Context: xdpMD{DataEnd: uint32(len(g.frame)), IngressIfindex: uint32(ifc.Index)},
		})
		took = time.Since(start)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("tgen: send %d frames out of %s: %w", count, dev, err)
	}
	return took, nil
}

// Sent is how many frames the generator has sent.
func (g *Generator) Sent() (Counters, error) { return read(g.objs.Counts) }

// xdpMD mirrors struct xdp_md for BPF_PROG_RUN's context.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// Counters are packets and bytes, summed over CPUs.
type Counters struct{ Packets, Bytes uint64 }

func read(m *ebpf.Map) (Counters, error) {
	var per []tgenCounters
	if err := m.Lookup(uint32(0), &per); err != nil {
		return Counters{}, err
	}
	var c Counters
	for _, p := range per {
		c.Packets += p.Pkts
		c.Bytes += p.Bytes
	}
	return c, nil
}

// Sink counts and drops what arrives on a device.
type Sink struct {
	objs tgenObjects
	link link.Link
}

// AttachSink puts a sink on dev in namespace ns.
func AttachSink(ns, dev string) (*Sink, error) {
	s := &Sink{}
	if err := loadTgenObjects(&s.objs, nil); err != nil {
		return nil, fmt.Errorf("tgen: load sink: %w", err)
	}
	err := netns.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		s.link, err = link.AttachXDP(link.XDPOptions{Program: s.objs.XdpSink, Interface: ifc.Index})
		return err
	})
	if err != nil {
		s.objs.Close()
		return nil, fmt.Errorf("tgen: attach sink to %s: %w", dev, err)
	}
	return s, nil
}

// Received is what arrived so far.
func (s *Sink) Received() (Counters, error) { return read(s.objs.Counts) }

// Reset zeroes the counters.
func (s *Sink) Reset() error {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	return s.objs.Counts.Put(uint32(0), make([]tgenCounters, n))
}

// Close detaches the sink.
func (s *Sink) Close() error { return errors.Join(s.link.Close(), s.objs.Close()) }
