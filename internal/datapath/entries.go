package datapath

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
)

// The entries below are the datapath's own model of a session's rules. IDs
// (FAR, QER, URR, SDF, list) are slots chosen by the caller; 0 means none.
// A slot that a lookup entry can reach is never rewritten: a changed rule
// goes to a new slot and the lookup entry is switched to it (see Apply).

// SrcIface is TS 29.244 §8.2.2 Source Interface.
type SrcIface uint8

const (
	Access SrcIface = 0
	Core   SrcIface = 1
	SGiLAN SrcIface = 2
	CPFunc SrcIface = 3
)

// OHR is which outer GTP-U/UDP/IP header a PDR removes (§8.2.64).
type OHR uint8

const (
	OHRNone   OHR = OHR(0)
	OHRGTPUv4 OHR = OHR(1 << 0)           // description 0
	OHRGTPUv6 OHR = OHR(1 << 1)           // description 1
	OHRGTPUIP OHR = OHRGTPUv4 | OHRGTPUv6 // description 6
)

// PDR is one packet detection rule. Protocol and ports of its filter go
// inline, and so does an IPv4 source prefix alone (an uplink PDR's UE
// address); other addresses, ToS and flow label need an SDF slot (SDFID),
// which the datapath writes together with the PDR.
//
// The rules package keeps a copy of every installed PDR, SDF and FAR, so
// their fields are ordered to waste no padding (a PDR is 112 bytes, not 136).
type PDR struct {
	ID     uint16 // PFCP PDR ID, reported in events
	Src    SrcIface
	QFI    uint8 // uplink match, 0 = any
	FARID  uint32
	QERIDs [2]uint32
	URRIDs [2]uint32
	SDFID  uint32 // slot for the filter's rest, when Filter.NeedsSlot()
	OHR    OHR
	Filter SDF // zero: matches every packet
}

func (p PDR) encode() (bpfUpfPdr, error) {
	v := bpfUpfPdr{
		FarId:    p.FARID,
		QerId:    p.QERIDs,
		UrrId:    p.URRIDs,
		PdrId:    p.ID,
		SrcIface: 1 << p.Src,
		Qfi:      p.QFI,
		Ohr:      uint8(p.OHR),
		Proto:    p.Filter.Proto,
	}
	v.SportLo, v.SportHi = p.Filter.SrcPorts.bounds()
	v.DportLo, v.DportHi = p.Filter.DstPorts.bounds()
	if p.Filter.sourceOnly() {
		src := p.Filter.Src.Masked()
		v.SdfId, v.Src4Len = addrWords(src.Addr())[0], uint8(src.Bits()) // SdfId is src4's union
	}
	if p.Filter.NeedsSlot() {
		if p.SDFID == 0 {
			return v, fmt.Errorf("pdr %d: its filter needs an sdf slot", p.ID)
		}
		v.SdfId = p.SDFID
	}
	return v, nil
}

// Rules is what a lookup entry holds: the session and its PDRs for one
// tunnel or UE address, in precedence order. The first is in the entry
// itself, as is its FAR when it fits: a packet it matches, the commonest
// (an IPv4v6 session's IPv4 PDR comes first), reads nothing else. With
// more than one PDR, all of them also live two a slot in the list slots
// from ListID on, len(PDRs)/2 rounded up.
type Rules struct {
	Session uint32
	PDRs    []PDR
	ListID  uint32
}

func (r Rules) encode() (bpfUpfRules, error) {
	v := bpfUpfRules{Session: r.Session, N_pdrs: uint8(min(len(r.PDRs), 255)), ListId: r.ListID}
	switch n := len(r.PDRs); {
	case n == 0:
		return v, fmt.Errorf("session %#x: no PDR", r.Session)
	case n > MaxPDRs:
		return v, fmt.Errorf("session %#x: %d PDRs, at most %d", r.Session, n, MaxPDRs)
	case n > 1 && r.ListID == 0:
		return v, fmt.Errorf("session %#x: %d PDRs and no list slot", r.Session, n)
	}
	pdr, err := r.PDRs[0].encode()
	v.Pdr = pdr
	return v, err
}

// inlineFAR puts the FAR of the entry's first PDR into the entry, when it
// fits: no tunnel, or an IPv4 one from a local GTP-U address.
func (v *bpfUpfRules) inlineFAR(f bpfUpfFar, local []netip.Addr) {
	ep := 0
	switch f.Ohc {
	case ohcGTPUv4:
		ep = slices.IndexFunc(local, func(a netip.Addr) bool { return a.Is4() && addrWords(a) == f.Local.A })
		if ep < 0 {
			return
		}
	case 0:
	default:
		return
	}
	v.FarInline, v.LocalEp = 1, uint8(ep)
	v.Far = bpfUpfFarInline{Action: f.Action, Ohc: f.Ohc, Tos: f.Tos, Flags: f.Flags, Teid: f.Teid, Peer: f.Peer.A[0]}
}

// encodeList is the list's PDRs in pairs, one pair a slot.
func (r Rules) encodeList() ([]bpfUpfPdrPair, error) {
	pairs := make([]bpfUpfPdrPair, (len(r.PDRs)+1)/2)
	for i, p := range r.PDRs {
		pdr, err := p.encode()
		if err != nil {
			return nil, err
		}
		pairs[i/2].Pdr[i%2] = pdr
	}
	return pairs, nil
}

// UplinkKey finds a session by the local F-TEID a G-PDU arrived on.
type UplinkKey struct {
	TEID     uint32
	Endpoint uint32 // index into Options.GTPUAddrs
}

// PortRange is inclusive; the zero value means any port.
type PortRange struct{ Lo, Hi uint16 }

func (r PortRange) bounds() (uint16, uint16) {
	if r == (PortRange{}) {
		return 0, 0xffff
	}
	return r.Lo, r.Hi
}

// SDF is one packet filter (a Flow Description and its companions).
// Zero fields match anything: an invalid Prefix is any address. Fields are
// ordered for size, as PDR's.
type SDF struct {
	Src, Dst  netip.Prefix
	SrcPorts  PortRange
	DstPorts  PortRange
	FlowLabel uint32
	MatchFlow bool  // FlowLabel is matched
	Proto     uint8 // 0 = any
	TOS       uint8
	TOSMask   uint8 // 0 = ToS not matched
}

// NeedsSlot says whether the filter has parts that the PDR cannot carry
// inline: anything beyond protocol, ports and an IPv4 source prefix alone.
func (s SDF) NeedsSlot() bool {
	return (s.Src.IsValid() || s.Dst.IsValid() || s.TOSMask != 0 || s.MatchFlow) && !s.sourceOnly()
}

// sourceOnly says whether the filter's only part beyond protocol and
// ports is an IPv4 source prefix (an uplink PDR's UE address, a downlink
// flow's remote network): the PDR carries it in place of an SDF slot.
func (s SDF) sourceOnly() bool {
	return s.Src.IsValid() && s.Src.Addr().Is4() && s.Src.Bits() > 0 && !s.Dst.IsValid() && s.TOSMask == 0 && !s.MatchFlow
}

func (s SDF) encode() (bpfUpfSdf, error) {
	var v bpfUpfSdf
	if s.Src.IsValid() && s.Dst.IsValid() && s.Src.Addr().Is4() != s.Dst.Addr().Is4() {
		return v, fmt.Errorf("sdf: source %s and destination %s are of different families", s.Src, s.Dst)
	}
	if s.TOSMask != 0 {
		v.Flags |= uint8(sdfTOS)
		v.Tos, v.TosMask = s.TOS&s.TOSMask, s.TOSMask
	}
	if s.MatchFlow {
		v.Flags |= uint8(sdfFlowLabel)
		v.FlowLabel = s.FlowLabel & 0xfffff
	}
	for _, side := range []struct {
		p    netip.Prefix
		addr *bpfUpfAddr
		len  *uint8
	}{{s.Src, &v.Src, &v.SrcLen}, {s.Dst, &v.Dst, &v.DstLen}} {
		if !side.p.IsValid() {
			continue
		}
		p := side.p.Masked()
		side.addr.A, *side.len = addrWords(p.Addr()), uint8(p.Bits())
		if p.Addr().Is4() {
			v.Flags |= uint8(sdfV4)
		} else {
			v.Flags |= uint8(sdfV6)
		}
	}
	return v, nil
}

// The UPF_SDF_* bits of the contract.
const (
	sdfTOS       = 1 << 0
	sdfFlowLabel = 1 << 1
	sdfV4        = 1 << 2
	sdfV6        = 1 << 3
)

// Action is a FAR's Apply Action bits (§8.2.26) that the datapath acts on.
type Action uint8

const (
	Drop Action = 1 << 0
	Forw Action = 1 << 1
	Buff Action = 1 << 2
	Nocp Action = 1 << 3
	Dupl Action = 1 << 4
)

// FAR is a forwarding action. With Peer valid, a GTP-U header is pushed
// toward Peer with TEID, from Local (which must be of the same family).
// Fields are ordered for size, as PDR's.
type FAR struct {
	Peer   netip.Addr
	Local  netip.Addr
	TEID   uint32
	Action Action
	TOS    uint8 // transport level marking (DSCP << 2)
	HasTOS bool
}

func (f FAR) encode() (bpfUpfFar, error) {
	v := bpfUpfFar{Action: uint8(f.Action)}
	if f.Peer.IsValid() {
		switch {
		case !f.Local.IsValid():
			return v, fmt.Errorf("far: no outer source address toward peer %v", f.Peer)
		case f.Local.Is4() != f.Peer.Is4():
			return v, fmt.Errorf("far: outer source %v and peer %v are of different families", f.Local, f.Peer)
		}
		v.Ohc = ohcGTPUv4
		if f.Peer.Is6() {
			v.Ohc = ohcGTPUv6
		}
		v.Teid = beWord(f.TEID)
		v.Peer.A = addrWords(f.Peer)
		v.Local.A = addrWords(f.Local)
	}
	if f.HasTOS {
		v.Flags |= farTOS
		v.Tos = f.TOS
	}
	return v, nil
}

const (
	ohcGTPUv4 = 1
	ohcGTPUv6 = 2
	farTOS    = 1 << 0
)

// QER is a QoS enforcement rule. MBRs are in bit/s, 0 = unlimited; the
// datapath keeps them in kbit/s, as PFCP gives them, rounded up.
type QER struct {
	ULClosed, DLClosed bool
	MBRUplink          uint64
	MBRDownlink        uint64
	QFI                uint8 // marked on downlink G-PDUs
	RQI                bool
}

func (q QER) encode() bpfUpfQer {
	v := bpfUpfQer{MbrUl: kbits(q.MBRUplink), MbrDl: kbits(q.MBRDownlink), Qfi: q.QFI & 0x3f}
	if q.ULClosed {
		v.Gate |= 1 << 0
	}
	if q.DLClosed {
		v.Gate |= 1 << 1
	}
	if q.RQI {
		v.Rqi = 1
	}
	return v
}

// kbits is a rate in bit/s as kbit/s, rounded up; beyond 4.29 Tbit/s, as
// good as unlimited, it is held at that.
func kbits(bps uint64) uint32 {
	return uint32(min(bps/1000+min(bps%1000, 1), math.MaxUint32))
}

// URR is a usage reporting rule's datapath part.
type URR struct {
	MBQE     bool   // measure before QoS enforcement
	Quota    uint64 // volume quota in bytes, if HasQuota
	HasQuota bool
}

func (u URR) encode() bpfUpfUrr {
	var v bpfUpfUrr
	if u.HasQuota {
		v.QuotaLeft = int64(min(u.Quota, 1<<62))
	}
	return v
}

// flags are the UPF_URR_* bits, which every CPU's usage record carries.
func (u URR) flags() uint32 {
	var f uint32
	if u.MBQE {
		f |= 1 << 0
	}
	if u.HasQuota {
		f |= 1 << 1
	}
	return f
}
