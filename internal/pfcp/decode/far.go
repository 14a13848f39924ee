package decode

import (
	"fmt"
	"net/netip"

	"github.com/wmnsk/go-pfcp/ie"

	"github.com/sluice-upf/sluice/internal/session"
)

// farFields are the IEs of a Create or Update FAR (§7.5.2.3, §7.5.4.3).
var farFields = fields(
	one(ie.FARID, func(u *session.FARUpdate, k *ie.IE) (err error) { u.ID, err = k.FARID(); return }),
	one(ie.ApplyAction, func(u *session.FARUpdate, k *ie.IE) error {
		a, err := applyAction(k)
		u.Action = &a
		return err
	}),
	one(ie.ForwardingParameters, forwarding),
	one(ie.UpdateForwardingParameters, forwarding),
	one(ie.BARID, func(u *session.FARUpdate, k *ie.IE) error {
		id, err := k.BARID()
		u.BARID = &id
		return err
	}),
)

// farRefused are the IEs of a Create or Update FAR the UPF does not act on.
var farRefused = []uint16{ie.DuplicatingParameters, ie.UpdateDuplicatingParameters, ie.RedirectInformation,
	ie.RedundantTransmissionForwardingParameters}

var (
	createFARGroup = group[session.FARUpdate]{name: "Create FAR", fields: farFields, mandatory: []uint16{ie.FARID, ie.ApplyAction},
		refused: farRefused}
	updateFARGroup = group[session.FARUpdate]{name: "Update FAR", fields: farFields, mandatory: []uint16{ie.FARID}, refused: farRefused}
)

// createFAR reads a Create FAR: the fields of an Update FAR, with the
// apply action mandatory and, in forwarding parameters, the destination.
func createFAR(i *ie.IE) (session.FAR, *session.Error) {
	var f session.FAR
	u, e := grouped(&createFARGroup, i)
	if e != nil {
		return f, e
	}
	if u.Forw != nil && u.Forw.Dest == nil {
		return f, missing("Forwarding Parameters", ie.DestinationInterface)
	}
	u.ApplyTo(&f)
	return f, nil
}

func updateFAR(i *ie.IE) (session.FARUpdate, *session.Error) { return grouped(&updateFARGroup, i) }

// applyAction reads the 1- or 2-octet Apply Action (§8.2.26).
func applyAction(k *ie.IE) (uint16, error) {
	b, err := k.ApplyAction()
	if err != nil || len(b) == 0 {
		return 0, fmt.Errorf("apply action: %v", err)
	}
	v := uint16(b[0])
	if len(b) > 1 {
		v |= uint16(b[1]) << 8
	}
	return v, nil
}

func forwarding(u *session.FARUpdate, k *ie.IE) error {
	f, e := grouped(&forwardingGroup, k)
	if e != nil {
		return e
	}
	u.Forw = &f
	return nil
}

// forwardingGroup is (Update) Forwarding Parameters (§7.5.2.3-2,
// §7.5.4.3-2): only what is there is set.
var forwardingGroup = group[session.ForwardingUpdate]{
	name: "Forwarding Parameters",
	fields: fields(
		one(ie.DestinationInterface, func(u *session.ForwardingUpdate, k *ie.IE) error {
			d, err := k.DestinationInterface()
			u.Dest = &d
			return err
		}),
		one(ie.NetworkInstance, func(u *session.ForwardingUpdate, k *ie.IE) error {
			n := networkInstance(k)
			u.NetworkInstance = &n
			return nil
		}),
		one(ie.OuterHeaderCreation, func(u *session.ForwardingUpdate, k *ie.IE) (err error) {
			u.OHC, err = ohc(k)
			return
		}),
		one(ie.TransportLevelMarking, func(u *session.ForwardingUpdate, k *ie.IE) error {
			t, err := k.TransportLevelMarking()
			tos := uint8(t >> 8)
			u.TOS = &tos
			return err
		}),
		one(ie.PFCPSMReqFlags, func(u *session.ForwardingUpdate, k *ie.IE) error {
			fl, err := k.PFCPSMReqFlags()
			u.EndMarker = fl&0x02 != 0 // SNDEM
			return err
		}),
		one(ie.TGPPInterfaceType, func(u *session.ForwardingUpdate, k *ie.IE) (err error) {
			u.InterfaceType, err = interfaceType(k)
			return
		}),
	),
	refused: []uint16{ie.RedirectInformation, ie.ForwardingPolicy, ie.HeaderEnrichment, ie.TrafficEndpointID,
		ie.Proxying, ie.DataNetworkAccessIdentifier},
}

func ohc(i *ie.IE) (*session.OHC, error) {
	o, err := fieldsOf(i, ie.ParseOuterHeaderCreationFields)
	if err != nil {
		return nil, incorrect(ie.OuterHeaderCreation, "outer header creation: %v", err)
	}
	const gtpuV4, gtpuV6 = 0x0100, 0x0200
	out := &session.OHC{TEID: o.TEID, Port: o.PortNumber}
	switch {
	case o.OuterHeaderCreationDescription&gtpuV4 != 0:
		out.Peer, _ = netip.AddrFromSlice(o.IPv4Address.To4())
	case o.OuterHeaderCreationDescription&gtpuV6 != 0:
		out.Peer, _ = netip.AddrFromSlice(o.IPv6Address.To16())
	default:
		return nil, unsupported(ie.OuterHeaderCreation,
			"outer header creation %#04x: only GTP-U/UDP/IPv4 and GTP-U/UDP/IPv6 are supported", o.OuterHeaderCreationDescription)
	}
	if !out.Peer.IsValid() {
		return nil, incorrect(ie.OuterHeaderCreation, "outer header creation without the peer's address")
	}
	return out, nil
}
