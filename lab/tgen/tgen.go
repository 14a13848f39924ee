// Package tgen is the lab's traffic generator and sink.
//
// A Generator sends GTP-U uplink (G-PDUs with a PDU Session Container) or
// plain UDP downlink toward UE addresses, cycling over a table of sessions
// and over flows in each session. It is an XDP program run by BPF_PROG_RUN
// in live-frame mode: one worker per CPU, each one long call on its own
// locked thread, stopped by a signal or when its count is reached.
//
// Every frame carries a stamp at the start of its innermost UDP payload:
// magic, flow, sequence number within the flow, send time. A Sink, an XDP
// program on the device where the frames arrive, checks each stamped frame
// against the same session table (TEID, QFI, inner addresses and ports),
// counts per flow, finds loss, duplicates and reordering, and keeps a
// latency histogram. Frames without a stamp pass untouched.
//
// Flow f belongs to session f % len(Sessions) and is flow f / len(Sessions)
// within it, so that consecutive flows are in different sessions; flow i of
// a session uses UE port UEPort+i.
package tgen

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/cilium/ebpf"

	"github.com/sluice-upf/sluice/lab/pkt"
)

// UDP ports of the flows: the UE side is UEPort + flow within the session.
const (
	UEPort = 10000
	DNPort = 9 // discard (RFC 863)
)

// Direction says which side of the UPF the traffic enters from.
type Direction uint8

const (
	// Uplink: G-PDUs from the gNB to the UPF's N3 address, carrying UDP
	// from UE addresses to the DN host.
	Uplink Direction = iota + 1
	// Downlink: UDP from the DN host to UE addresses.
	Downlink
)

func (d Direction) String() string {
	switch d {
	case Uplink:
		return "uplink"
	case Downlink:
		return "downlink"
	}
	return fmt.Sprintf("direction %d", uint8(d))
}

// Session is what the generator and the sink know of a PDU session. UPFs
// do not all hand out contiguous TEIDs and addresses: each is given.
type Session struct {
	UE           netip.Addr // IPv4 or IPv6, one family for all sessions
	UplinkTEID   uint32     // the UPF's F-TEID on N3
	DownlinkTEID uint32     // the gNB's F-TEID
	// QFI of the session's QoS flow. 0: none known (a UPF given no QER
	// for the session may send G-PDUs without a PDU Session Container),
	// so the sink checks no container.
	QFI uint8
}

// Spec is the traffic: which way, over which sessions, how large.
type Spec struct {
	Direction Direction
	Sessions  []Session
	Flows     int // per session; 0 means 1
	// Size is the inner IP packet's length in bytes (what crosses N6),
	// from 52 (IPv4) or 72 (IPv6), the least that holds the stamp, to 9000
	// (as far as the devices' MTU allows).
	Size int
	// Mix, if set, replaces Size: sizes in proportion to their weights,
	// interleaved. At most 4 sizes, weights summing to at most 16.
	Mix []Weighted
	// Frames leave with these MACs (lab/topo's plan).
	SrcMAC, DstMAC net.HardwareAddr
	// GNB and UPF are the uplink's outer source and destination (the
	// UPF's N3 address in its F-TEIDs).
	GNB, UPF netip.Addr
	// DN is the host on the data network the UEs talk to.
	DN netip.Addr
}

// Weighted is one size of a mix.
type Weighted struct{ Size, Weight int }

// IMIX is the simple IMIX, 7:4:1 frames of 64, 594 and 1518 bytes, as
// inner IP packets: without the frames' 18 bytes of Ethernet header and
// FCS, and the smallest kept at 64 bytes to hold the stamp (IPv4 only: an
// IPv6 packet with a stamp needs 72).
var IMIX = []Weighted{{Size: 64, Weight: 7}, {Size: 576, Weight: 4}, {Size: 1500, Weight: 1}}

// Limits of a mix, as the generator's cfg_size and cfg_mix.
const (
	mixSizes = 4
	mixSlots = 16
)

// StampLen is struct stamp's: magic, flow, sequence number, send time.
// Every frame sent carries one, so no payload is shorter.
const StampLen = 24

// FlowCount is the number of flows: sessions times flows per session.
func (s Spec) FlowCount() int { return len(s.Sessions) * s.flows() }

func (s Spec) flows() int { return max(s.Flows, 1) }

// Flow is the id of flow i of session sess.
func (s Spec) Flow(sess, i int) int { return i*len(s.Sessions) + sess }

// sizes are the inner IP lengths sent, and the order in which a worker
// sends them: each in turn as often as its weight, spread out (smooth
// weighted round robin).
func (s Spec) sizes() ([]int, []uint8) {
	if len(s.Mix) == 0 {
		return []int{s.Size}, []uint8{0}
	}
	var sizes []int
	total := 0
	for _, w := range s.Mix {
		sizes = append(sizes, w.Size)
		total += w.Weight
	}
	var order []uint8
	credit := make([]int, len(s.Mix))
	for range total {
		best := 0
		for i, w := range s.Mix {
			credit[i] += w.Weight
			if credit[i] > credit[best] {
				best = i
			}
		}
		credit[best] -= total
		order = append(order, uint8(best))
	}
	return sizes, order
}

func (s Spec) minSize() int {
	return ipHeaderLen(s.Sessions[0].UE) + pkt.UDPLen + StampLen
}

func ipHeaderLen(a netip.Addr) int {
	if a.Is4() {
		return pkt.IPv4Len
	}
	return pkt.IPv6Len
}

func (s Spec) validate() error {
	if s.Direction != Uplink && s.Direction != Downlink {
		return fmt.Errorf("no direction")
	}
	if len(s.Sessions) == 0 {
		return errors.New("no sessions")
	}
	if s.flows() > 65535-UEPort {
		return fmt.Errorf("%d flows per session: more than UE ports", s.Flows)
	}
	if uint64(s.FlowCount()) > 1<<31 {
		return fmt.Errorf("%d flows: too many", s.FlowCount())
	}
	ue := s.Sessions[0].UE
	for i, sess := range s.Sessions {
		if !sess.UE.IsValid() || sess.UE.Is4() != ue.Is4() {
			return fmt.Errorf("session %d: UE address %v: every session needs one, of one family", i, sess.UE)
		}
	}
	if !s.DN.IsValid() || s.DN.Is4() != ue.Is4() {
		return fmt.Errorf("DN address %v: not of the UE addresses' family", s.DN)
	}
	if s.Direction == Uplink && (!s.GNB.IsValid() || !s.UPF.IsValid() || s.GNB.Is4() != s.UPF.Is4()) {
		return fmt.Errorf("uplink needs gNB and UPF addresses of one family, not %v and %v", s.GNB, s.UPF)
	}
	if len(s.SrcMAC) != 6 || len(s.DstMAC) != 6 {
		return errors.New("no MACs")
	}
	sizes, order := s.sizes()
	if len(sizes) > mixSizes || len(order) > mixSlots {
		return fmt.Errorf("a mix of %d sizes weighing %d: more than %d sizes or %d in all", len(sizes), len(order), mixSizes, mixSlots)
	}
	for i, size := range sizes {
		if size < s.minSize() || size > 9000 {
			return fmt.Errorf("size %d: not from %d to 9000", size, s.minSize())
		}
		if len(s.Mix) > 0 && s.Mix[i].Weight < 1 {
			return fmt.Errorf("size %d weighs %d", size, s.Mix[i].Weight)
		}
	}
	return nil
}

// frame is the template: session 0, flow 0, at size bytes of inner IP.
func (s Spec) frame(size int) pkt.Frame {
	s0 := s.Sessions[0]
	ue := netip.AddrPortFrom(s0.UE, UEPort)
	dn := netip.AddrPortFrom(s.DN, DNPort)
	f := pkt.Frame{Dst: s.DstMAC, Src: s.SrcMAC, From: dn, To: ue,
		Payload: make([]byte, size-ipHeaderLen(s0.UE)-pkt.UDPLen)}
	if s.Direction == Uplink {
		f.From, f.To = ue, dn
		f.Tunnel = &pkt.Tunnel{Src: s.GNB, Dst: s.UPF, TEID: s0.UplinkTEID, QFI: s0.QFI, Uplink: true}
	}
	return f
}

// sessionTable is the sessions as the programs read them.
func (s Spec) sessionTable() ([]uint32, []tgenLabSession) {
	keys := make([]uint32, len(s.Sessions))
	vals := make([]tgenLabSession, len(s.Sessions))
	for i, sess := range s.Sessions {
		keys[i] = uint32(i)
		copy(vals[i].Ue[:], sess.UE.AsSlice())
		vals[i].UlTeid, vals[i].DlTeid, vals[i].Qfi = sess.UplinkTEID, sess.DownlinkTEID, sess.QFI
	}
	return keys, vals
}

// flowTable says where each flow belongs: its session and UE port.
func (s Spec) flowTable() ([]uint32, []tgenLabFlow) {
	keys := make([]uint32, s.FlowCount())
	at := make([]tgenLabFlow, len(keys))
	for f := range keys {
		keys[f] = uint32(f)
		at[f] = tgenLabFlow{Session: uint32(f % len(s.Sessions)), UePort: uint16(UEPort + f/len(s.Sessions))}
	}
	return keys, at
}

// setVariables sets a program's load-time constants by name.
func setVariables(spec *ebpf.CollectionSpec, vars map[string]any) error {
	for name, v := range vars {
		if err := spec.Variables[name].Set(v); err != nil {
			return fmt.Errorf("set %s: %w", name, err)
		}
	}
	return nil
}

// putAll writes a whole array map at once.
func putAll(m *ebpf.Map, keys, values any) error {
	_, err := m.BatchUpdate(keys, values, nil)
	return err
}
