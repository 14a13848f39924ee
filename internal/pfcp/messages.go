package pfcp

import (
	"fmt"
	"net/netip"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/session"
)

// decodeAll decodes every IE of a list with one decoder.
func decodeAll[T any](ies []*ie.IE, dec func(*ie.IE) (T, *session.Error)) ([]T, *session.Error) {
	out := make([]T, 0, len(ies))
	for _, i := range ies {
		v, e := dec(i)
		if e != nil {
			return nil, e
		}
		out = append(out, v)
	}
	return out, nil
}

// decodeEstablish reads a Session Establishment Request (§7.5.2), all but
// the peer, which its association names; an IE whose Length is wrong
// comes first in a refusal (lengthFirst).
func decodeEstablish(m *message.SessionEstablishmentRequest) (*session.Establish, *session.Error) {
	r, e := establishRequest(m)
	if e != nil {
		return nil, lengthFirst(m.Payload, e)
	}
	return r, nil
}

func establishRequest(m *message.SessionEstablishmentRequest) (*session.Establish, *session.Error) {
	if m.NodeID == nil {
		return nil, missing("Session Establishment Request", ie.NodeID)
	}
	if m.CPFSEID == nil {
		return nil, missing("Session Establishment Request", ie.FSEID)
	}
	fseid, err := fieldsOf(m.CPFSEID, ie.ParseFSEIDFields)
	if err != nil {
		return nil, incorrect(ie.FSEID, "CP F-SEID: %v", err)
	}
	if fseid.IPv4Address == nil && fseid.IPv6Address == nil { // §8.2.37: at least one
		return nil, incorrect(ie.FSEID, "CP F-SEID with no address")
	}
	r := &session.Establish{CPSEID: fseid.SEID, CPAddr: fseidAddr(fseid)}
	var e *session.Error
	if r.PDRs, e = decodeAll(m.CreatePDR, decodePDR); e != nil {
		return nil, e
	}
	if r.FARs, e = decodeAll(m.CreateFAR, decodeFAR); e != nil {
		return nil, e
	}
	if r.QERs, e = decodeAll(m.CreateQER, decodeQER); e != nil {
		return nil, e
	}
	if r.URRs, e = decodeAll(m.CreateURR, decodeURR); e != nil {
		return nil, e
	}
	if m.CreateBAR != nil {
		var b session.BAR
		if b, e = decodeBAR(m.CreateBAR); e != nil {
			return nil, e
		}
		r.BARs = []session.BAR{b}
	}
	return r, nil
}

func fseidAddr(f *ie.FSEIDFields) netip.Addr {
	if a, ok := netip.AddrFromSlice(f.IPv4Address.To4()); ok && f.IPv4Address != nil {
		return a
	}
	a, _ := netip.AddrFromSlice(f.IPv6Address.To16())
	return a
}

// decodeModify reads a Session Modification Request (§7.5.4), as
// decodeEstablish does, for the session its header's SEID names.
func decodeModify(m *message.SessionModificationRequest) (*session.Modify, *session.Error) {
	r, e := modifyRequest(m, m.Header.SEID)
	if e != nil {
		return nil, lengthFirst(m.Payload, e)
	}
	return r, nil
}

func modifyRequest(m *message.SessionModificationRequest, seid uint64) (*session.Modify, *session.Error) {
	r := &session.Modify{SEID: seid}
	var e *session.Error
	steps := []func() *session.Error{
		func() (e *session.Error) { r.CreatePDRs, e = decodeAll(m.CreatePDR, decodePDR); return },
		func() (e *session.Error) { r.CreateFARs, e = decodeAll(m.CreateFAR, decodeFAR); return },
		func() (e *session.Error) { r.CreateQERs, e = decodeAll(m.CreateQER, decodeQER); return },
		func() (e *session.Error) { r.CreateURRs, e = decodeAll(m.CreateURR, decodeURR); return },
		func() (e *session.Error) { r.UpdatePDRs, e = decodeAll(m.UpdatePDR, decodeUpdatePDR); return },
		func() (e *session.Error) { r.UpdateFARs, e = decodeAll(m.UpdateFAR, decodeUpdateFAR); return },
		func() (e *session.Error) { r.UpdateQERs, e = decodeAll(m.UpdateQER, decodeQERFields); return },
		func() (e *session.Error) { r.UpdateURRs, e = decodeAll(m.UpdateURR, decodeUpdateURR); return },
		func() (e *session.Error) {
			r.RemovePDRs, e = decodeAll(m.RemovePDR, idOf(ie.PDRID, (*ie.IE).PDRID))
			return
		},
		func() (e *session.Error) {
			r.RemoveFARs, e = decodeAll(m.RemoveFAR, idOf(ie.FARID, (*ie.IE).FARID))
			return
		},
		func() (e *session.Error) {
			r.RemoveQERs, e = decodeAll(m.RemoveQER, idOf(ie.QERID, (*ie.IE).QERID))
			return
		},
		func() (e *session.Error) {
			r.RemoveURRs, e = decodeAll(m.RemoveURR, idOf(ie.URRID, (*ie.IE).URRID))
			return
		},
		func() (e *session.Error) {
			r.QueryURRs, e = decodeAll(m.QueryURR, idOf(ie.URRID, (*ie.IE).URRID))
			return
		},
	}
	for _, step := range steps {
		if e = step(); e != nil {
			return nil, e
		}
	}
	if m.CreateBAR != nil {
		b, e := decodeBAR(m.CreateBAR)
		if e != nil {
			return nil, e
		}
		r.CreateBARs = []session.BAR{b}
	}
	if m.RemoveBAR != nil {
		id, e := idOf(ie.BARID, (*ie.IE).BARID)(m.RemoveBAR)
		if e != nil {
			return nil, e
		}
		r.RemoveBARs = []uint8{id}
	}
	if m.PFCPSMReqFlags != nil {
		fl, err := m.PFCPSMReqFlags.PFCPSMReqFlags()
		if err != nil {
			return nil, incorrect(ie.PFCPSMReqFlags, "PFCPSMReq-Flags: %v", err)
		}
		r.DropBuffer, r.QueryAll = fl&0x01 != 0, fl&0x04 != 0
	}
	return r, nil
}

// idOf reads the one ID a Remove or Query IE carries.
func idOf[T any](t uint16, get func(*ie.IE) (T, error)) func(*ie.IE) (T, *session.Error) {
	return func(i *ie.IE) (T, *session.Error) {
		var zero T
		kids, e := children(i)
		if e != nil {
			return zero, e
		}
		for _, k := range kids {
			if k.Type == t {
				v, err := get(k)
				if err != nil {
					return zero, incorrect(t, "IE %d: %v", t, err)
				}
				return v, nil
			}
		}
		return zero, missing(fmt.Sprintf("IE %d", i.Type), t)
	}
}

func decodeUpdatePDR(i *ie.IE) (session.PDRUpdate, *session.Error) {
	var u session.PDRUpdate
	kids, e := children(i)
	if e != nil {
		return u, e
	}
	haveID := false
	for _, k := range kids {
		var err error
		switch k.Type {
		case ie.PDRID:
			haveID = true
			u.ID, err = k.PDRID()
		case ie.Precedence:
			var p uint32
			p, err = k.Precedence()
			u.Precedence = &p
		case ie.PDI:
			pdi, e := decodePDI(k)
			if e != nil {
				return u, e
			}
			u.PDI = &pdi
		case ie.OuterHeaderRemoval:
			var b []byte
			if b, err = k.OuterHeaderRemoval(); err == nil && len(b) > 0 {
				ohr := b[0] // a copy: a pointer into b would keep the datagram alive
				u.OHR = &ohr
			}
		case ie.FARID:
			var id uint32
			id, err = k.FARID()
			u.FARID = &id
		case ie.QERID:
			var id uint32
			id, err = k.QERID()
			u.QERIDs, u.SetQERs = append(u.QERIDs, id), true
		case ie.URRID:
			var id uint32
			id, err = k.URRID()
			u.URRIDs, u.SetURRs = append(u.URRIDs, id), true
		}
		if err != nil {
			return u, incorrect(k.Type, "Update PDR: IE %d: %v", k.Type, err)
		}
	}
	if !haveID {
		return u, missing("Update PDR", ie.PDRID)
	}
	return u, nil
}

func decodeUpdateFAR(i *ie.IE) (session.FARUpdate, *session.Error) {
	var u session.FARUpdate
	kids, e := children(i)
	if e != nil {
		return u, e
	}
	haveID := false
	for _, k := range kids {
		var err error
		switch k.Type {
		case ie.FARID:
			haveID = true
			u.ID, err = k.FARID()
		case ie.ApplyAction:
			var a uint16
			a, err = applyAction(k)
			u.Action = &a
		case ie.ForwardingParameters, ie.UpdateForwardingParameters:
			if u.Forw, e = decodeForwardingUpdate(k); e != nil {
				return u, e
			}
		case ie.BARID:
			var id uint8
			id, err = k.BARID()
			u.BARID = &id
		case ie.DuplicatingParameters, ie.UpdateDuplicatingParameters, ie.RedirectInformation:
			return u, &session.Error{Cause: session.CauseRuleFailure, IE: k.Type, Msg: fmt.Sprintf("FAR %d: IE %d is not supported", u.ID, k.Type)}
		}
		if err != nil {
			return u, incorrect(k.Type, "FAR: IE %d: %v", k.Type, err)
		}
	}
	if !haveID {
		return u, missing("FAR", ie.FARID)
	}
	return u, nil
}

// decodeQERFields reads the fields of a Create or Update QER that are there.
func decodeQERFields(i *ie.IE) (session.QERUpdate, *session.Error) {
	var u session.QERUpdate
	kids, e := children(i)
	if e != nil {
		return u, e
	}
	haveID := false
	for _, k := range kids {
		var err error
		switch k.Type {
		case ie.QERID:
			haveID = true
			u.ID, err = k.QERID()
		case ie.GateStatus:
			var ul, dl uint8
			if ul, err = k.GateStatusUL(); err == nil {
				dl, err = k.GateStatusDL()
			}
			u.GateUL, u.GateDL = &ul, &dl
		case ie.MBR:
			var ul, dl uint64
			ul, dl, err = bitRates(k.MBRUL, k.MBRDL)
			u.MBRUL, u.MBRDL = &ul, &dl
		case ie.GBR:
			var ul, dl uint64
			ul, dl, err = bitRates(k.GBRUL, k.GBRDL)
			u.GBRUL, u.GBRDL = &ul, &dl
		case ie.QFI:
			var q uint8
			q, err = k.QFI()
			u.QFI = &q
		case ie.RQI:
			var r uint8
			r, err = k.RQI()
			b := r&1 != 0
			u.RQI = &b
		}
		if err != nil {
			return u, incorrect(k.Type, "QER: IE %d: %v", k.Type, err)
		}
	}
	if !haveID {
		return u, missing("QER", ie.QERID)
	}
	return u, nil
}

func decodeUpdateURR(i *ie.IE) (session.URRUpdate, *session.Error) {
	f, e := decodeURRFields(i)
	return f.URRUpdate, e
}
