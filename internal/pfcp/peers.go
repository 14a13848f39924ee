package pfcp

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/gtpu"
	"github.com/sluice-upf/sluice/internal/pfcp/decode"
	"github.com/sluice-upf/sluice/internal/report"
	"github.com/sluice-upf/sluice/internal/session"
)

// Path management (§6.2): heartbeats to every associated SMF, peers
// declared lost when they stop answering, their sessions deleted after a
// grace period with the final usage kept for their return, and
// associations we set up ourselves toward configured SMFs.

// keptUsage is the final usage of a lost peer's deleted sessions, sent
// when it associates again without having restarted.
type keptUsage struct {
	recovery time.Time
	reports  []sessionUsage
}

type sessionUsage struct {
	cpSEID uint64
	usage  []report.Usage
}

// paths runs the timers of path management.
func (s *Server) paths(now time.Time) {
	if s.cfg.Heartbeat > 0 {
		for _, a := range s.assocs {
			if !a.lost.IsZero() && now.Sub(a.lost) >= s.cfg.PeerGrace {
				s.expire(a)
				continue
			}
			if !now.Before(a.nextHeartbeat) {
				a.nextHeartbeat = now.Add(s.cfg.Heartbeat)
				s.heartbeat(a)
			}
		}
	}
	if len(s.cfg.Associate) > 0 && !now.Before(s.nextSetup) {
		// Once the last try has run out of retransmissions.
		s.nextSetup = now.Add(max(s.cfg.Heartbeat, s.cfg.T1*time.Duration(s.cfg.N1)))
		for _, to := range s.cfg.Associate {
			if !s.associatedWith(to) {
				s.setupAssociation(to)
			}
		}
	}
}

// heardFrom notes that a peer sent something. Any message proves a peer
// alive, whether or not it answers our heartbeats: only silence through
// a whole heartbeat's retransmissions makes it lost, and a lost peer that
// sends again is back.
func (s *Server) heardFrom(addr netip.Addr) {
	for _, a := range s.assocs {
		if a.addr.Addr() != addr {
			continue
		}
		a.heard = s.now()
		if !a.lost.IsZero() {
			s.log.Info("pfcp: peer heard again", "node", a.nodeID, "after", a.heard.Sub(a.lost))
			a.lost = time.Time{}
			s.keeper.assoc(a.nodeID)
		}
	}
}

// heartbeatStamp checks the Recovery Time Stamp of a peer's Heartbeat
// Request against its association's. A different one is logged, not
// taken for a restart: OAI and pfcpsim put the time of each request
// there, and would lose every session at every heartbeat. A restarted
// SMF is known by the stamp of its Association Setup and of its answers
// to upfd's heartbeats.
func (s *Server) heartbeatStamp(from netip.AddrPort, m *message.HeartbeatRequest) {
	if m.RecoveryTimeStamp == nil {
		return
	}
	ts, err := m.RecoveryTimeStamp.RecoveryTimeStamp()
	for _, a := range s.assocs {
		if a.addr.Addr() == from.Addr() && (err != nil || !ts.Equal(a.recovery)) {
			s.quiet.note(slog.LevelDebug, "pfcp: a heartbeat's recovery time stamp is not the association's", "node", a.nodeID,
				"association", a.recovery, "heartbeat", ts, "err", err)
		}
	}
}

// heartbeat asks a peer whether it is there (§6.2.2). No answer after
// HeartbeatRetries sends, and nothing else heard from it meanwhile: lost.
// An answer with a new Recovery Time Stamp: restarted.
func (s *Server) heartbeat(a *association) {
	node, asked := a.nodeID, s.now()
	s.requestN(a.addr, s.cfg.HeartbeatRetries, func(seq uint32) message.Message {
		return message.NewHeartbeatRequest(seq, ie.NewRecoveryTimeStamp(s.cfg.Recovery), nil)
	}, func(m message.Message) {
		a, ok := s.assocs[node]
		if !ok {
			return
		}
		if r, ok := m.(*message.HeartbeatResponse); ok && r.RecoveryTimeStamp != nil {
			if ts, err := r.RecoveryTimeStamp.RecoveryTimeStamp(); err == nil && !ts.Equal(a.recovery) {
				s.log.Info("pfcp: peer restarted, dropping its sessions", "node", node)
				s.dropSessions(node)
				s.endAssociation(a.addr.Addr())
				a.recovery = ts
				s.keeper.assoc(node)
			}
		}
	}, func() {
		if a, ok := s.assocs[node]; ok && a.lost.IsZero() && a.heard.Before(asked) {
			a.lost = s.now()
			s.keeper.assoc(node)
			s.log.Warn("pfcp: peer lost; keeping its sessions", "node", node, "grace", s.cfg.PeerGrace)
		}
	})
}

// expire ends the association of a peer lost for longer than the grace:
// its sessions are deleted and their final usage kept for its return.
func (s *Server) expire(a *association) {
	gone := s.sessionsOf(a.nodeID)
	k := keptUsage{recovery: a.recovery}
	for _, x := range gone {
		us, err := s.deleteSession(x.SEID)
		if err != nil {
			s.log.Error("pfcp: delete a lost peer's session", "seid", x.SEID, "err", err)
			continue
		}
		if len(us) > 0 {
			k.reports = append(k.reports, sessionUsage{x.CPSEID, us})
		}
	}
	delete(s.assocs, a.nodeID)
	s.keeper.assoc(a.nodeID)
	s.endAssociation(a.addr.Addr())
	s.kept[a.nodeID] = k
	s.keeper.keptUsage(a.nodeID)
	s.log.Warn("pfcp: peer gone; its sessions are deleted", "node", a.nodeID, "sessions", len(gone), "usage_kept", len(k.reports))
}

// sendKept reports the final usage of sessions deleted while the peer was
// away (USAR with TERMR).
func (s *Server) sendKept(to netip.AddrPort, kept []sessionUsage) {
	for _, k := range kept {
		ies := append([]*ie.IE{ie.NewReportType(0, 0, 1, 0)}, usageIEs(ie.NewUsageReportWithinSessionReportRequest, k.usage)...)
		s.reportTo(to, k.cpSEID, ies...)
	}
}

func (s *Server) associatedWith(to netip.AddrPort) bool {
	for _, a := range s.assocs {
		if a.addr.Addr().Unmap() == to.Addr().Unmap() {
			return true
		}
	}
	return false
}

// setupAssociation asks an SMF for an association (UPF-initiated,
// §6.2.6.2); it is tried again every heartbeat interval until accepted.
func (s *Server) setupAssociation(to netip.AddrPort) {
	s.request(to, func(seq uint32) message.Message {
		return message.NewAssociationSetupRequest(seq, s.nodeID(), ie.NewRecoveryTimeStamp(s.cfg.Recovery), upFeatures())
	}, func(m message.Message) {
		r, ok := m.(*message.AssociationSetupResponse)
		if !ok || r.Cause == nil || r.NodeID == nil || r.RecoveryTimeStamp == nil {
			return
		}
		c, _ := r.Cause.Cause()
		node, err1 := decode.NodeID(r.NodeID)
		ts, err2 := r.RecoveryTimeStamp.RecoveryTimeStamp()
		if c != session.CauseAccepted || err1 != nil || err2 != nil {
			s.log.Warn("pfcp: association setup refused", "peer", to, "cause", c)
			return
		}
		s.associated(node, to, ts, cpFeatures(r.CPFunctionFeatures))
	}, nil)
}

// gtpPath is a GTP-U peer's path as Echo sees it.
type gtpPath struct {
	// from is the side whose address the sessions send to the peer from:
	// the Echo leaves from there too (TS 29.281 §7.2.1: a path is a pair
	// of local and remote addresses).
	from       gtpu.Side
	unanswered int  // Echo Requests in a row with no response
	failed     bool // reported to the SMFs
}

func (s *Server) gtpuReceived() <-chan gtpu.Received {
	if s.cfg.GTPU == nil {
		return nil // never ready
	}
	return s.cfg.GTPU.Received()
}

// echo sends an Echo Request to every GTP-U peer that a session sends to,
// and reports each path that has gone EchoRetries rounds unanswered.
func (s *Server) echo(now time.Time) {
	if s.cfg.GTPU == nil || s.cfg.EchoInterval <= 0 || now.Before(s.nextEcho) {
		return
	}
	s.nextEcho = now.Add(s.cfg.EchoInterval)
	inUse := s.gtpPeersInUse()
	for peer := range s.gtpPaths {
		if _, ok := inUse[peer]; !ok {
			delete(s.gtpPaths, peer)
		}
	}
	for peer, from := range inUse {
		p, ok := s.gtpPaths[peer]
		if !ok {
			p = &gtpPath{}
			s.gtpPaths[peer] = p
		}
		p.from = from
		if p.unanswered >= s.cfg.EchoRetries && !p.failed {
			p.failed = true
			s.log.Warn("gtpu: path failure", "peer", peer, "unanswered", p.unanswered)
			s.pathFailure(peer)
		}
		p.unanswered++
		if err := s.cfg.GTPU.Echo(p.from, peer); err != nil {
			s.log.Debug("gtpu: echo", "peer", peer, "from", p.from, "err", err)
		}
	}
}

// gtpPeersInUse are the peers the sessions' FARs send G-PDUs to, each
// with the side they send from: FARs that forward, to an address. One
// that drops or buffers keeps its outer header for later, which is no
// path in use (pfcpsim sets up its downlink FARs as DROP toward 0.0.0.0).
// Sessions that reach one peer from both sides (rare) have it echoed
// from the access side.
func (s *Server) gtpPeersInUse() map[netip.Addr]gtpu.Side {
	inUse := map[netip.Addr]gtpu.Side{}
	s.store.Sessions(func(x *session.Session) bool {
		for _, f := range x.FARs.All() {
			if f.Action&session.ActForw == 0 || f.Forw == nil || f.Forw.OHC == nil || f.Forw.OHC.Peer.IsUnspecified() {
				continue
			}
			from := sideOf(f.Forw.Dest)
			if was, ok := inUse[f.Forw.OHC.Peer]; !ok || from < was {
				inUse[f.Forw.OHC.Peer] = from
			}
		}
		return true
	})
	return inUse
}

// sideOf is the side a FAR with destination interface dest sends from: the
// access side toward the access network, the core side toward anything
// else, as the rule compiler chooses the FAR's outer source.
func sideOf(dest uint8) gtpu.Side {
	if dest == session.Access {
		return gtpu.Access
	}
	return gtpu.Core
}

// sideOfRole is the side of the device a packet arrived on.
func sideOfRole(r datapath.Role) gtpu.Side {
	if r == datapath.N9 {
		return gtpu.Core
	}
	return gtpu.Access
}

// pathAnswered: an Echo Response came; a failed path is back.
func (s *Server) pathAnswered(from netip.Addr) {
	p, ok := s.gtpPaths[from]
	if !ok {
		return
	}
	if p.failed {
		s.log.Info("gtpu: path recovered", "peer", from)
	}
	p.unanswered, p.failed = 0, false
}

// pathFailure tells every SMF that the path to a GTP-U peer failed: a
// Node Report with a User Plane Path Failure Report (§7.4.5.1).
func (s *Server) pathFailure(peer netip.Addr) {
	var flags uint8 = 0x02 // V4
	v4, v6 := peer.String(), ""
	if peer.Is6() {
		flags, v4, v6 = 0x01, "", peer.String()
	}
	for _, a := range s.assocs {
		s.request(a.addr, func(seq uint32) message.Message {
			return message.NewNodeReportRequest(seq, s.nodeID(), ie.NewNodeReportType(0x01), // UPFR
				ie.NewUserPlanePathFailureReport(ie.NewRemoteGTPUPeer(flags, v4, v6, 0, "")))
		}, nil, nil)
	}
}

// errorIndication: a peer has no tunnel for what a session sends it. The
// session's SMF gets an Error Indication Report with the peer's F-TEID
// (§5.10), and decides.
func (s *Server) errorIndication(r gtpu.Received) {
	peer := r.Peer
	if !peer.IsValid() {
		peer = r.From
	}
	seid, ok := s.store.SendingTo(peer, r.TEID)
	if !ok {
		s.log.Debug("gtpu: error indication for no session", "peer", peer, "teid", r.TEID)
		return
	}
	var fteid *ie.IE
	if peer.Is4() {
		fteid = ie.NewFTEID(0x01, r.TEID, peer.AsSlice(), nil, 0)
	} else {
		fteid = ie.NewFTEID(0x02, r.TEID, nil, peer.AsSlice(), 0)
	}
	s.log.Info("gtpu: error indication", "seid", seid, "peer", peer, "teid", r.TEID)
	s.report(seid, ie.NewReportType(0, 1, 0, 0), ie.NewErrorIndicationReport(fteid))
}
