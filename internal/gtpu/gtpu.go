// Package gtpu sends and receives the GTP-U messages (TS 29.281) that the
// control side of the UPF handles: End Marker on a path switch, Error
// Indication for a G-PDU to no tunnel, and Echo Request and Response to
// watch the paths to gNBs and peer UPFs. G-PDUs and answering Echo
// Requests are the datapath's; it passes the rest up to these sockets.
//
// The UPF has a socket on each of its GTP-U addresses (N3 and N9, IPv4
// and IPv6), and each message leaves from the local address of the path
// it belongs to: an Echo path is a pair of local and remote addresses
// (§7.2.1), an End Marker goes down the old user-plane path (§7.3.2),
// and an Error Indication comes from the address the G-PDU was sent to
// (§7.3.1). A peer UPF on N9 knows us by our N9 address, not our N3 one.
package gtpu

import (
	"net/netip"
	"slices"
)

// Port is GTP-U's UDP port (TS 29.281 §4.4.2.3).
const Port = 2152

// Side is what a local GTP-U address faces.
type Side uint8

const (
	Access Side = iota // N3: the gNBs
	Core               // N9: other UPFs
)

func (s Side) String() string {
	if s == Core {
		return "core"
	}
	return "access"
}

// Addrs are the UPF's GTP-U addresses by the side they face.
type Addrs struct{ Access, Core []netip.Addr }

// Source is the local address of the path toward peer from side: the
// first of that side's addresses in peer's family; toward the core, an
// access address when no core one will do (a UPF without N9 sends the rest
// from N3). It is the outer source the rule compiler gives a FAR
// (rules.Compiler), so path management travels as the G-PDUs do.
func (a Addrs) Source(side Side, peer netip.Addr) (netip.Addr, bool) {
	if !peer.IsValid() {
		return netip.Addr{}, false
	}
	candidates := a.Access
	if side == Core {
		candidates = slices.Concat(a.Core, a.Access)
	}
	for _, local := range candidates {
		if local.Is4() == peer.Is4() {
			return local, true
		}
	}
	return netip.Addr{}, false
}
