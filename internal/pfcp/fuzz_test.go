package pfcp

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	gopfcp "github.com/wmnsk/go-pfcp"
	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
)

// FuzzN4 hands the server one datagram, whatever it holds, once an
// association and the session of establishment are in place. Then: no
// panic, not even one the server recovers from, unless go-pfcp raised it
// decoding (it does on some malformed IEs); an answer only to a request,
// or Version Not Supported to any other version, that go-pfcp decodes,
// of the response type that goes with the request and with its sequence
// number; a store that holds together; nothing changed by a request
// refused or left unanswered; and once every session is deleted, nothing
// left in the datapath.
func FuzzN4(f *testing.F) {
	gopfcp.DisableLogging() // it logs every unknown message type
	d := newDirect(f)
	const up = 1 // the session's SEID: a fresh store's first
	for _, m := range []message.Message{
		message.NewHeartbeatRequest(100, ie.NewRecoveryTimeStamp(smfRecovery), nil),
		message.NewAssociationSetupRequest(101, smfNode, ie.NewRecoveryTimeStamp(smfRecovery)),
		message.NewAssociationSetupRequest(102, smfNode, ie.NewRecoveryTimeStamp(smfRecovery.Add(time.Hour))),
		message.NewAssociationSetupRequest(103, ie.NewNodeID("", "", "smf.example.org"), ie.NewRecoveryTimeStamp(smfRecovery)),
		message.NewAssociationUpdateRequest(104, smfNode),
		message.NewAssociationReleaseRequest(105, smfNode),
		establishment(106, 0xdef), // refused: the UE address is the session's
		choosingUE(107, 0xdef),
		downlinkToGNB(108, up),
		message.NewSessionModificationRequest(0, 0, up, 109, 0, ie.NewQueryURR(ie.NewURRID(1)),
			ie.NewPFCPSMReqFlags(0x04)),
		message.NewSessionModificationRequest(0, 0, up, 110, 0, ie.NewRemovePDR(ie.NewPDRID(2)), ie.NewRemoveFAR(ie.NewFARID(2)),
			ie.NewRemoveURR(ie.NewURRID(1)), ie.NewUpdatePDR(ie.NewPDRID(1), ie.NewURRID(2)),
			ie.NewCreateURR(ie.NewURRID(2), ie.NewMeasurementMethod(0, 1, 1), ie.NewReportingTriggers(0x01, 0x00, 0x00),
				ie.NewMeasurementPeriod(10*time.Second), ie.NewVolumeThreshold(0x01, 1000, 0, 0))),
		message.NewSessionModificationRequest(0, 0, up, 111, 0,
			ie.NewCreatePDR(ie.NewPDRID(3), ie.NewPrecedence(10),
				ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x06, "10.45.0.2", "", 0, 0),
					ie.NewSDFFilter("permit out 17 from 198.18.7.10 5000-5010 to assigned", "", "", "", 1)),
				ie.NewFARID(3)),
			ie.NewCreateFAR(ie.NewFARID(3), ie.NewApplyAction(0x01)),
			ie.NewUpdateQER(ie.NewQERID(1), ie.NewGateStatus(1, 1)),
			ie.NewCreateBAR(ie.NewBARID(1), ie.NewSuggestedBufferingPacketsCount(4))),
		message.NewSessionDeletionRequest(0, 0, up, 112, 0),
	} {
		b := make([]byte, m.MarshalLen())
		if err := m.MarshalTo(b); err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}

	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 65535 {
			return // no UDP datagram is longer
		}
		d.reset(t)
		d.associate(t)
		if got := d.establish(t, 0xabc); got != up {
			t.Fatalf("the first session is %d", got)
		}
		// The set-up's answers are cached under its sequence numbers, which
		// the datagram may reuse (TestPrivilegedSequenceNumberReusedByAnotherRequest):
		// it gets answers of its own, and so do the deletions after it.
		d.forget()
		before := d.state()

		got := d.send(t, b)
		if p := d.log.panics; len(p) > 0 && !codecPanics(b) {
			t.Fatalf("the server recovered from a panic of its own: %v", p)
		}
		h, err := message.ParseHeader(b)
		v1 := err == nil && h.Flags>>5 == 1
		switch {
		case got == nil && err == nil && !v1:
			t.Fatalf("no Version Not Supported for PFCP version %d", h.Flags>>5)
		case got == nil:
		case err != nil:
			t.Fatalf("answered a datagram with no header: % x", got)
		case v1 && !answered[h.Type]:
			t.Fatalf("answered a message of type %d", h.Type)
		}
		refused := got == nil
		if got != nil {
			a := decodeAnswer(t, got)
			want := h.Type + 1
			if !v1 {
				want = message.MsgTypeVersionNotSupportedResponse
			}
			switch {
			case a.h.SequenceNumber != h.SequenceNumber:
				t.Fatalf("answered sequence number %d with %d", h.SequenceNumber, a.h.SequenceNumber)
			case a.h.Type != want:
				t.Fatalf("answered type %d with type %d, want %d", h.Type, a.h.Type, want)
			case a.cause == 0 && want != message.MsgTypeHeartbeatResponse && want != message.MsgTypeVersionNotSupportedResponse:
				t.Fatalf("a %s with no Cause", a.m.MessageTypeName())
			}
			refused = a.cause != 0 && a.cause != session.CauseAccepted
		}
		if refused {
			unchanged(t, before, d.state())
		}
		d.consistent(t)
		d.forget()
		d.deleteAll(t)
	})
}

// codecPanics reports whether go-pfcp v0.0.24 panics on b: parsing it,
// or reading one of its IEs with a decoder known to panic on malformed
// input. Those slice past an IE's end up to the capacity of what holds
// it, so b is copied as the server copies what it reads.
func codecPanics(b []byte) (panics bool) {
	defer func() { panics = recover() != nil }()
	b = slices.Clone(b)
	if _, err := message.Parse(b); err != nil {
		return false
	}
	h, _ := message.ParseHeader(b)
	ies, err := ie.ParseMultiIEs(h.Payload)
	if err != nil {
		return false
	}
	var walk func([]*ie.IE)
	walk = func(ies []*ie.IE) {
		for _, i := range ies {
			switch i.Type {
			case ie.SDFFilter:
				i.SDFFilter()
			case ie.OuterHeaderCreation:
				i.OuterHeaderCreation()
			}
			walk(i.ChildIEs)
		}
	}
	walk(ies)
	return false
}

// forget empties the server's response cache.
func (d *direct) forget() { d.s.cache = newResponseCache() }

// answered are the messages the server answers.
var answered = map[uint8]bool{
	message.MsgTypeHeartbeatRequest:            true,
	message.MsgTypeAssociationSetupRequest:     true,
	message.MsgTypeAssociationUpdateRequest:    true,
	message.MsgTypeAssociationReleaseRequest:   true,
	message.MsgTypeSessionEstablishmentRequest: true,
	message.MsgTypeSessionModificationRequest:  true,
	message.MsgTypeSessionDeletionRequest:      true,
}

// consistent checks what the store promises: every session belongs to an
// association, answers to its SEID and is the only one with its CP
// F-SEID; its rules name only rules it has; its F-TEIDs and UE addresses
// are chosen and its alone. And the datapath holds entries only for what
// the store's sessions own.
func (d *direct) consistent(t *testing.T) {
	t.Helper()
	type smfSession struct {
		peer string
		seid uint64
	}
	cps := map[smfSession]uint64{}
	teids := map[uint32]uint64{}
	ues := map[netip.Addr]uint64{}
	own := func(what string, owners map[netip.Addr]uint64, a netip.Addr, seid uint64) {
		if o, ok := owners[a]; ok && o != seid {
			t.Errorf("%s %v belongs to sessions %d and %d", what, a, o, seid)
		}
		owners[a] = seid
	}
	d.s.store.Sessions(func(x *session.Session) bool {
		if y, ok := d.s.store.Get(x.SEID); !ok || y != x || x.SEID == 0 {
			t.Errorf("session %d is not found by its SEID", x.SEID)
		}
		if _, ok := d.s.assocs[x.Peer]; !ok {
			t.Errorf("session %d belongs to %q, which has no association", x.SEID, x.Peer)
		}
		k := smfSession{x.Peer, x.CPSEID}
		if o, dup := cps[k]; dup {
			t.Errorf("sessions %d and %d have one CP F-SEID %#x", o, x.SEID, x.CPSEID)
		}
		cps[k] = x.SEID
		for id, p := range x.PDRs.All() {
			if !x.FARs.Has(p.FARID) {
				t.Errorf("session %d: PDR %d names FAR %d, not there", x.SEID, id, p.FARID)
			}
			for _, q := range p.QERIDs {
				if !x.QERs.Has(q) {
					t.Errorf("session %d: PDR %d names QER %d, not there", x.SEID, id, q)
				}
			}
			for _, u := range p.URRIDs {
				if !x.URRs.Has(u) {
					t.Errorf("session %d: PDR %d names URR %d, not there", x.SEID, id, u)
				}
			}
			if f := p.PDI.FTEID; f != nil {
				if f.Choose || !f.V4.IsValid() && !f.V6.IsValid() {
					t.Errorf("session %d: PDR %d has an F-TEID not chosen: %+v", x.SEID, id, *f)
				}
				if o, ok := teids[f.TEID]; ok && o != x.SEID {
					t.Errorf("TEID %#x belongs to sessions %d and %d", f.TEID, o, x.SEID)
				}
				teids[f.TEID] = x.SEID
			}
			if u := p.PDI.UEIP; u != nil {
				if u.ChooseV4 || u.ChooseV6 {
					t.Errorf("session %d: PDR %d has a UE address not chosen: %+v", x.SEID, id, *u)
				}
				for _, a := range []netip.Addr{u.V4, u.V6.Masked().Addr()} {
					if a.IsValid() {
						own("UE address", ues, a, x.SEID)
					}
				}
			}
		}
		for id, f := range x.FARs.All() {
			if f.BARID != nil {
				if !x.BARs.Has(*f.BARID) {
					t.Errorf("session %d: FAR %d names BAR %d, not there", x.SEID, id, *f.BARID)
				}
			}
		}
		return true
	})
	for k, seid := range d.rec.lookups {
		var owner uint64
		switch k := k.(type) {
		case datapath.UplinkKey:
			owner = teids[k.TEID]
		case netip.Prefix:
			owner = ues[k.Addr()]
		}
		if owner != uint64(seid) {
			t.Errorf("the datapath sends %v to session %d; the store has it owned by %d", k, seid, owner)
		}
	}
}
