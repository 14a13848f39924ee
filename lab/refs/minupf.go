package refs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// Minimal is the minimal UPF (bpf/lab/minupf.bpf.c): the least work any UPF
// must do for the frames the Forwarder only moves. Uplink, a G-PDU to the
// N3 address is parsed through its extension headers, its session found by
// F-TEID, counted, decapsulated and sent to N6; downlink, an IPv4 packet's
// session is found by UE address, counted, encapsulated in GTP-U with a PDU
// Session Container and sent to the gNB on N3. One hash lookup and one
// per-CPU counter record a packet, both tables keyed as upfd's; no rules,
// no QoS, no FIB (the MACs are the ports' peers, as for the Forwarder).
type Minimal struct {
	objs     minupfObjects
	ports    [2]*net.Interface // N3, N6: enum min_port_id
	links    []link.Link
	capacity int
	added    int
	cpus     int
}

// MinimalOptions are what the minimal UPF is loaded with.
type MinimalOptions struct {
	// GTPUAddr is the UPF's IPv4 address on N3: the local end of every
	// uplink F-TEID, and the outer source of the downlink.
	GTPUAddr netip.Addr
	// MaxSessions sizes both tables and the counters.
	MaxSessions int
}

// Session is a PDU session as the minimal UPF holds it.
type Session struct {
	UplinkTEID   uint32     // the UPF's F-TEID on N3 (with GTPUAddr)
	UE           netip.Addr // IPv4: the downlink's key
	DownlinkTEID uint32     // the gNB's F-TEID
	GNB          netip.Addr // IPv4: the downlink's outer destination
	QFI          uint8      // in the downlink's PDU Session Container
}

// Counters are a session's packets and the bytes of their IP packets (the
// UE's, without the tunnel), each way, summed over the CPUs.
type Counters struct {
	UplinkPackets, UplinkBytes     uint64
	DownlinkPackets, DownlinkBytes uint64
}

// Indexes of struct min_counter's dir.
const (
	minUL = 0
	minDL = 1
)

// LoadMinimal prepares a minimal UPF between the devices n3 and n6 of the
// current network namespace; frames leave each port to its Peer.
func LoadMinimal(n3, n6 Port, opts MinimalOptions) (*Minimal, error) {
	if !opts.GTPUAddr.Is4() {
		return nil, fmt.Errorf("refs: minimal UPF: GTP-U address %v: not IPv4", opts.GTPUAddr)
	}
	if opts.MaxSessions < 1 {
		return nil, fmt.Errorf("refs: minimal UPF: room for %d sessions", opts.MaxSessions)
	}
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("refs: minimal UPF: %w", err)
	}
	spec, err := loadMinupf()
	if err != nil {
		return nil, err
	}
	m := &Minimal{capacity: opts.MaxSessions, cpus: cpus}
	var cfg [2]minupfMinPort
	for i, p := range []Port{n3, n6} {
		ifc, err := net.InterfaceByName(p.Name)
		if err != nil {
			return nil, fmt.Errorf("refs: port %s: %w", p.Name, err)
		}
		m.ports[i] = ifc
		cfg[i].Ifindex = uint32(ifc.Index)
		copy(cfg[i].Smac[:], ifc.HardwareAddr)
		copy(cfg[i].Peer[:], p.Peer)
	}
	n := uint32(opts.MaxSessions)
	spec.Maps["min_ul"].MaxEntries = n
	spec.Maps["min_dl"].MaxEntries = n
	spec.Maps["min_counters"].MaxEntries = n * uint32(cpus)
	for name, v := range map[string]any{"cfg_ports": cfg, "cfg_n3_addr": opts.GTPUAddr.As4(), "cfg_sessions": n} {
		if err := spec.Variables[name].Set(v); err != nil {
			return nil, fmt.Errorf("refs: minimal UPF: set %s: %w", name, err)
		}
	}
	if err := spec.LoadAndAssign(&m.objs, nil); err != nil {
		return nil, fmt.Errorf("refs: load the minimal UPF: %w", err)
	}
	for _, ifc := range m.ports {
		if err := m.objs.MinTx.Put(uint32(ifc.Index), uint32(ifc.Index)); err != nil {
			m.Close()
			return nil, fmt.Errorf("refs: add %s to the devmap: %w", ifc.Name, err)
		}
	}
	return m, nil
}

// Add installs sessions after those added before; Counters knows them by
// their order.
func (m *Minimal) Add(sessions []Session) error {
	if m.added+len(sessions) > m.capacity {
		return fmt.Errorf("refs: minimal UPF: %d sessions more than its %d", m.added+len(sessions)-m.capacity, m.capacity)
	}
	ulKeys := make([]minupfMinFteidKey, len(sessions))
	dlKeys := make([][4]byte, len(sessions))
	ulVals := make([]minupfMinSession, len(sessions))
	dlVals := make([]minupfMinSession, len(sessions))
	for i, s := range sessions {
		if !s.UE.Is4() || !s.GNB.Is4() {
			return fmt.Errorf("refs: minimal UPF: session %d: UE %v and gNB %v: not IPv4", m.added+i, s.UE, s.GNB)
		}
		id := uint32(m.added + i)
		// The key's endpoint is the index of the one GTP-U address, 0.
		ulKeys[i] = minupfMinFteidKey{Teid: teid32(s.UplinkTEID)}
		dlKeys[i] = s.UE.As4()
		ulVals[i] = minupfMinSession{Id: id}
		dlVals[i] = minupfMinSession{Id: id, Teid: teid32(s.DownlinkTEID), Gnb: wire32(s.GNB.As4()), Qfi: s.QFI}
	}
	if _, err := m.objs.MinUl.BatchUpdate(ulKeys, ulVals, nil); err != nil {
		return fmt.Errorf("refs: minimal UPF: uplink table: %w", err)
	}
	if _, err := m.objs.MinDl.BatchUpdate(dlKeys, dlVals, nil); err != nil {
		return fmt.Errorf("refs: minimal UPF: downlink table: %w", err)
	}
	m.added += len(sessions)
	return nil
}

// Counters are what the CPUs counted for the i-th session added.
func (m *Minimal) Counters(i int) (Counters, error) {
	if i < 0 || i >= m.added {
		return Counters{}, fmt.Errorf("refs: minimal UPF: no session %d", i)
	}
	var sum Counters
	for cpu := range m.cpus {
		var c minupfMinCounter
		if err := m.objs.MinCounters.Lookup(uint32(cpu*m.capacity+i), &c); err != nil {
			return Counters{}, fmt.Errorf("refs: minimal UPF: counters of session %d: %w", i, err)
		}
		sum.UplinkPackets += c.Dir[minUL].Packets
		sum.UplinkBytes += c.Dir[minUL].Bytes
		sum.DownlinkPackets += c.Dir[minDL].Packets
		sum.DownlinkBytes += c.Dir[minDL].Bytes
	}
	return sum, nil
}

// Uplink is the program for N3: decapsulation.
func (m *Minimal) Uplink() *ebpf.Program { return m.objs.XdpMinN3 }

// Downlink is the program for N6: encapsulation.
func (m *Minimal) Downlink() *ebpf.Program { return m.objs.XdpMinN6 }

// Attach puts the uplink program on N3 and the downlink one on N6, in
// native mode.
func (m *Minimal) Attach() error {
	for i, prog := range []*ebpf.Program{m.Uplink(), m.Downlink()} {
		l, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: m.ports[i].Index, Flags: link.XDPDriverMode})
		if err != nil {
			return errors.Join(fmt.Errorf("refs: attach to %s: %w", m.ports[i].Name, err), m.Detach())
		}
		m.links = append(m.links, l)
	}
	return nil
}

// Detach removes the programs from the ports.
func (m *Minimal) Detach() error {
	var errs []error
	for _, l := range m.links {
		errs = append(errs, l.Close())
	}
	m.links = nil
	return errors.Join(errs...)
}

// Close detaches and releases the minimal UPF.
func (m *Minimal) Close() error { return errors.Join(m.Detach(), m.objs.Close()) }

// wire32 is the word whose bytes in memory are b: how the program keeps
// TEIDs and addresses, as on the wire.
func wire32(b [4]byte) uint32 { return binary.NativeEndian.Uint32(b[:]) }

// teid32 is a TEID as the program keeps it.
func teid32(teid uint32) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], teid)
	return wire32(b)
}
