package pfcp

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/report"
	"github.com/sluice-upf/sluice/internal/session"
)

// apply takes a request through the store, the compiler and the datapath.
// On any failure nothing of it is left: the datapath gets its lookup
// entries back, the compiler and the store their reservations.
func (s *Server) apply(req session.Request) (*session.Change, error) {
	c, err := s.store.Plan(req)
	if err != nil {
		return nil, err
	}
	seid := seidOf(c)
	p, err := s.rules.Plan(seid, c.Next)
	if err != nil {
		s.store.Abort(c)
		return nil, err
	}
	if err := s.dp.Apply(p.Ops); err != nil {
		if uerr := s.dp.Apply(p.Undo); uerr != nil {
			s.log.Error("pfcp: undo after a failed datapath change also failed: the datapath may hold a partial session",
				"seid", seid, "err", err, "undo", uerr)
		}
		s.rules.Abort(p)
		s.store.Abort(c)
		cause := session.CauseSystemFailure
		if errors.Is(err, datapath.ErrFull) {
			cause = session.CauseNoResources
		}
		return nil, &session.Error{Cause: cause, Msg: "datapath: " + err.Error()}
	}
	s.rules.Commit(p)
	s.store.Commit(c)
	s.keeper.session(seid)
	return c, nil
}

func seidOf(c *session.Change) uint64 {
	if c.Next != nil {
		return c.Next.SEID
	}
	return c.Prev.SEID
}

// refusalOf is err as a refusal: System failure unless it says otherwise.
func refusalOf(err error) *session.Error {
	var e *session.Error
	if !errors.As(err, &e) {
		return &session.Error{Cause: session.CauseSystemFailure, Msg: fmt.Sprint(err)}
	}
	return e
}

// causeOf is the cause and offending IE a refusal carries.
func causeOf(err error) []*ie.IE {
	e := refusalOf(err)
	ies := []*ie.IE{ie.NewCause(e.Cause)}
	if e.IE != 0 {
		ies = append(ies, ie.NewOffendingIE(e.IE))
	}
	return ies
}

// refused logs, counted (tally), why a session request was refused.
func (s *Server) refused(what string, err error, args ...any) {
	e := refusalOf(err)
	s.quiet.note(slog.LevelInfo, "pfcp: "+what+" refused", append(args, "cause", e.Cause, "ie", e.IE, "why", e.Msg)...)
}

func (s *Server) sessionEstablishment(d datagram) message.Message {
	req, derr := d.req.(*session.Establish), d.reqErr
	reply := func(ies ...*ie.IE) message.Message {
		return message.NewSessionEstablishmentResponse(0, 0, req.CPSEID, d.h.SequenceNumber, 0, append([]*ie.IE{s.nodeID()}, ies...)...)
	}
	if s.refusingNewSessions(d.from, req.CPSEID) { // draining (view.go)
		return reply(ie.NewCause(session.CauseNoResources))
	}
	if req.Peer == "" { // the Node ID is missing or wrong, so no association can be named
		s.refused("session establishment", derr, "from", d.from)
		return reply(causeOf(derr)...)
	}
	a, ok := s.assocs[req.Peer]
	if !ok {
		return reply(ie.NewCause(session.CauseNoAssociation))
	}
	if derr != nil {
		s.refused("session establishment", derr, "node", a.nodeID)
		return reply(append(causeOf(derr), s.loadIEs(a)...)...)
	}
	c, err := s.apply(req)
	if err != nil {
		s.refused("session establishment", err, "node", a.nodeID, "cp_seid", req.CPSEID)
		return reply(append(causeOf(err), s.loadIEs(a)...)...)
	}
	s.meters.Sync(c.Next.SEID, c.Next.URRs, s.rules.URRSlots(c.Next.SEID), s.now())
	s.log.Info("pfcp: session established", "node", a.nodeID, "seid", c.Next.SEID, "cp_seid", req.CPSEID,
		"pdrs", c.Next.PDRs.Len(), "fars", c.Next.FARs.Len(), "qers", c.Next.QERs.Len(), "urrs", c.Next.URRs.Len())
	ies := append([]*ie.IE{ie.NewCause(session.CauseAccepted), s.upFSEID(c.Next.SEID)}, createdPDRs(c.Created)...)
	return reply(append(ies, s.loadIEs(a)...)...)
}

// upFSEID is our F-SEID for a session, on the N4 address (the node ID's
// when we listen on every address).
func (s *Server) upFSEID(seid uint64) *ie.IE {
	a := s.cfg.Listen.Addr()
	if id, err := netip.ParseAddr(s.cfg.NodeID); err == nil && a.IsUnspecified() {
		a = id
	}
	if a.Is4() {
		return ie.NewFSEID(seid, a.AsSlice(), nil)
	}
	return ie.NewFSEID(seid, nil, a.AsSlice())
}

func createdPDRs(created []session.CreatedPDR) []*ie.IE {
	var out []*ie.IE
	for _, c := range created {
		kids := []*ie.IE{ie.NewPDRID(c.ID)}
		if f := c.FTEID; f != nil {
			var flags uint8
			var v4, v6 net.IP
			if f.V4.IsValid() {
				flags, v4 = flags|0x01, f.V4.AsSlice()
			}
			if f.V6.IsValid() {
				flags, v6 = flags|0x02, f.V6.AsSlice()
			}
			kids = append(kids, ie.NewFTEID(flags, f.TEID, v4, v6, 0))
		}
		if u := c.UEIP; u != nil {
			var flags uint8
			v4, v6 := "", ""
			if u.V4.IsValid() {
				flags, v4 = flags|0x02, u.V4.String()
			}
			if u.V6.IsValid() {
				flags, v6 = flags|0x01, u.V6.Addr().String()
			}
			if u.Dest {
				flags |= 0x04
			}
			kids = append(kids, ie.NewUEIPAddress(flags, v4, v6, 0, 0))
		}
		out = append(out, ie.NewCreatedPDR(kids...))
	}
	return out
}

// session finds the session a modification or deletion names, and checks
// that it belongs to an association.
func (s *Server) session(seid uint64) (*session.Session, bool) {
	x, ok := s.store.Get(seid)
	if !ok {
		return nil, false
	}
	_, assoc := s.assocs[x.Peer]
	return x, assoc
}

func (s *Server) sessionModification(d datagram) message.Message {
	h := d.h
	x, ok := s.session(h.SEID)
	if !ok {
		return message.NewSessionModificationResponse(0, 0, 0, h.SequenceNumber, 0, ie.NewCause(session.CauseNoSession))
	}
	reply := func(ies ...*ie.IE) message.Message {
		return message.NewSessionModificationResponse(0, 0, x.CPSEID, h.SequenceNumber, 0, append(ies, s.loadIEsFor(x.Peer)...)...)
	}
	if derr := d.reqErr; derr != nil {
		s.refused("session modification", derr, "seid", x.SEID)
		return reply(causeOf(derr)...)
	}
	req := d.req.(*session.Modify)
	c, err := s.apply(req)
	if err != nil {
		s.refused("session modification", err, "seid", x.SEID)
		return reply(causeOf(err)...)
	}
	x = c.Next // with the SMF's new F-SEID, if it changed it
	now := s.now()
	usage := s.meters.Sync(x.SEID, c.Next.URRs, s.rules.URRSlots(x.SEID), now) // removed URRs
	usage = append(usage, s.meters.Report(x.SEID, c.Query, report.TrigImmediate, now)...)
	s.sendEndMarkers(c)
	s.afterBuffering(c)
	s.log.Info("pfcp: session modified", "seid", x.SEID, "pdrs", c.Next.PDRs.Len(), "fars", c.Next.FARs.Len(), "reports", len(usage))
	ies := append([]*ie.IE{ie.NewCause(session.CauseAccepted)}, createdPDRs(c.Created)...)
	return reply(append(ies, usageIEs(ie.NewUsageReportWithinSessionModificationResponse, usage)...)...)
}

func (s *Server) sessionDeletion(from netip.AddrPort, m *message.SessionDeletionRequest) message.Message {
	h := m.Header
	x, ok := s.session(h.SEID)
	if !ok {
		return message.NewSessionDeletionResponse(0, 0, 0, h.SequenceNumber, 0, ie.NewCause(session.CauseNoSession))
	}
	cp := deletionCPSEID(m, x.CPSEID)
	usage, err := s.deleteSession(x.SEID)
	if err != nil {
		s.log.Error("pfcp: session deletion failed", "seid", x.SEID, "err", err)
		return message.NewSessionDeletionResponse(0, 0, cp, h.SequenceNumber, 0, append(causeOf(err), s.loadIEsFor(x.Peer)...)...)
	}
	s.log.Info("pfcp: session deleted", "seid", x.SEID, "reports", len(usage))
	ies := append([]*ie.IE{ie.NewCause(session.CauseAccepted)}, s.loadIEsFor(x.Peer)...)
	ies = append(ies, usageIEs(ie.NewUsageReportWithinSessionDeletionResponse, usage)...)
	return message.NewSessionDeletionResponse(0, 0, cp, h.SequenceNumber, 0, ies...)
}

// deletionCPSEID is where the Session Deletion Response goes: the CP
// F-SEID the request carries (Table 7.5.6-1 since Release 18: the SMF
// that deletes the session may not be the one that set it up; pfcpsim
// sends its own), else the session's.
func deletionCPSEID(m *message.SessionDeletionRequest, session uint64) uint64 {
	for _, i := range m.IEs {
		if i.Type == ie.FSEID {
			if f, err := i.FSEID(); err == nil {
				return f.SEID
			}
		}
	}
	return session
}

// deleteSession takes a session out of the datapath and the store, ends
// its buffering, and gives its final usage: exact, since nothing counts
// once its lookups are gone.
func (s *Server) deleteSession(seid uint64) ([]report.Usage, error) {
	c, err := s.apply(&session.Delete{SEID: seid})
	if err != nil {
		return nil, err
	}
	usage := s.meters.Close(seid, s.now())
	s.afterBuffering(c)
	return usage, nil
}
