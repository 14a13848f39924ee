package pfcp

import (
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/pfcp/decode"
	"github.com/sluice-upf/sluice/internal/session"
)

// association is an SMF we have a PFCP association with (§6.2.6).
type association struct {
	nodeID   string
	addr     netip.AddrPort
	recovery time.Time
	since    time.Time // when it was set up
	// nextHeartbeat is when we ask next; lost, when a heartbeat went
	// unanswered and nothing else came since (zero while the peer is
	// heard); heard, when the peer last sent anything.
	nextHeartbeat, lost, heard time.Time
	// loadTold is what it takes of load and overload control, and what
	// it was last told (load.go).
	loadTold peerLoad
}

// UP Function Features (§8.2.25) the UPF has, by octet: exactly what it
// does, no more (an SMF relies on each).
const (
	featFTUP  = 0x10 // octet 5: it allocates F-TEIDs
	featEMPU  = 0x01 // octet 6: it sends End Marker packets (SNDEM)
	featUEIP  = 0x04 // octet 7: it allocates UE addresses
	featMNOP  = 0x10 // octet 7: it measures packets, not only octets
	featVTIME = 0x04 // octet 8: Quota Validity Time (QUVTI)
)

// upFeatures is the UP Function Features IE of our responses.
func upFeatures() *ie.IE {
	return ie.NewUPFunctionFeatures(featFTUP, featEMPU, featUEIP|featMNOP, featVTIME)
}

func (s *Server) associationSetup(from netip.AddrPort, m *message.AssociationSetupRequest) message.Message {
	seq := m.Header.SequenceNumber
	// Table 7.4.4.2-1 gives the response no Offending IE: the cause and
	// upfd's log say what was wrong.
	refuse := func(cause uint8, what string) message.Message {
		s.quiet.note(slog.LevelInfo, "pfcp: association setup refused", "from", from, "cause", cause, "why", what)
		return message.NewAssociationSetupResponse(seq, s.nodeID(), ie.NewCause(cause), ie.NewRecoveryTimeStamp(s.cfg.Recovery))
	}
	if m.NodeID == nil {
		return refuse(session.CauseMandatoryIEMissing, "no Node ID")
	}
	if m.RecoveryTimeStamp == nil {
		return refuse(session.CauseMandatoryIEMissing, "no Recovery Time Stamp")
	}
	node, err := decode.NodeID(m.NodeID)
	if err != nil {
		return refuse(session.CauseMandatoryIEIncorrect, "Node ID: "+err.Error())
	}
	recovery, err := m.RecoveryTimeStamp.RecoveryTimeStamp()
	if err != nil {
		return refuse(session.CauseMandatoryIEIncorrect, "Recovery Time Stamp: "+err.Error())
	}
	if why := s.roomForAssociation(node, from.Addr()); why != "" {
		return refuse(session.CauseNoResources, why)
	}
	s.associated(node, from, recovery, cpFeatures(m.CPFunctionFeatures))
	return message.NewAssociationSetupResponse(seq, s.nodeID(), ie.NewCause(session.CauseAccepted),
		ie.NewRecoveryTimeStamp(s.cfg.Recovery), upFeatures())
}

// Associations a peer may hold, per address and in all: an SMF has one
// Node ID per address or a few; without a bound one allowed address made
// 5,000 associations by changing its Node ID.
const (
	maxAssociationsPerAddress = 8
	maxAssociations           = 1024
)

// roomForAssociation says why a new association of node from addr would
// be one too many, or "". An association that is there already is set up
// again, not added.
func (s *Server) roomForAssociation(node string, addr netip.Addr) string {
	if _, known := s.assocs[node]; known {
		return ""
	}
	if len(s.assocs) >= maxAssociations {
		return fmt.Sprintf("%d associations: at most %d", len(s.assocs), maxAssociations)
	}
	n := 0
	for _, a := range s.assocs {
		if a.addr.Addr() == addr {
			n++
		}
	}
	if n >= maxAssociationsPerAddress {
		return fmt.Sprintf("%d associations from %v: at most %d an address", n, addr, maxAssociationsPerAddress)
	}
	return ""
}

// associated records an association set up by either side. A peer known
// with another Recovery Time Stamp restarted: what it had is gone on its
// side, so its sessions and kept reports go too.
func (s *Server) associated(node string, addr netip.AddrPort, recovery time.Time, load peerLoad) {
	old, known := s.assocs[node]
	if known && !old.recovery.Equal(recovery) {
		s.log.Info("pfcp: peer restarted, dropping its sessions", "node", node, "was", old.recovery, "now", recovery)
		s.dropSessions(node)
	}
	s.endAssociation(addr.Addr())
	if known {
		s.endAssociation(old.addr.Addr())
	}
	s.assocs[node] = &association{nodeID: node, addr: addr, recovery: recovery, since: s.now(), nextHeartbeat: s.now().Add(s.cfg.Heartbeat),
		loadTold: load}
	s.keeper.assoc(node)
	s.log.Info("pfcp: association set up", "node", node, "peer", addr)
	if k, ok := s.kept[node]; ok {
		delete(s.kept, node)
		s.keeper.keptUsage(node)
		if k.recovery.Equal(recovery) {
			s.sendKept(addr, k.reports)
		}
	}
}

func (s *Server) associationUpdate(from netip.AddrPort, m *message.AssociationUpdateRequest) message.Message {
	seq := m.Header.SequenceNumber
	if m.NodeID == nil { // Table 7.4.4.4-1: no Offending IE
		return message.NewAssociationUpdateResponse(seq, s.nodeID(), ie.NewCause(session.CauseMandatoryIEMissing))
	}
	a, ok := s.association(m.NodeID)
	if !ok {
		return message.NewAssociationUpdateResponse(seq, s.nodeID(), ie.NewCause(session.CauseNoAssociation))
	}
	if m.CPFunctionFeatures != nil { // what it takes now; it is told the load afresh
		a.loadTold = cpFeatures(m.CPFunctionFeatures)
	}
	return message.NewAssociationUpdateResponse(seq, s.nodeID(), ie.NewCause(session.CauseAccepted), upFeatures())
}

func (s *Server) associationRelease(from netip.AddrPort, m *message.AssociationReleaseRequest) message.Message {
	seq := m.Header.SequenceNumber
	if m.NodeID == nil { // Table 7.4.4.6-1: no Offending IE
		return message.NewAssociationReleaseResponse(seq, s.nodeID(), ie.NewCause(session.CauseMandatoryIEMissing))
	}
	a, ok := s.association(m.NodeID)
	if !ok {
		return message.NewAssociationReleaseResponse(seq, s.nodeID(), ie.NewCause(session.CauseNoAssociation))
	}
	s.dropSessions(a.nodeID)
	delete(s.assocs, a.nodeID)
	s.keeper.assoc(a.nodeID)
	s.endAssociation(a.addr.Addr())
	s.log.Info("pfcp: association released", "node", a.nodeID)
	return message.NewAssociationReleaseResponse(seq, s.nodeID(), ie.NewCause(session.CauseAccepted))
}

// association finds the association a Node ID IE names.
func (s *Server) association(nodeID *ie.IE) (*association, bool) {
	if nodeID == nil {
		return nil, false
	}
	id, err := decode.NodeID(nodeID)
	if err != nil {
		return nil, false
	}
	a, ok := s.assocs[id]
	return a, ok
}

// endAssociation forgets the responses to a peer's address: a cached
// answer stands only for the same request within the same association,
// and an association that ends or begins again (release, setup, a
// restart of the peer) starts its numbering over.
func (s *Server) endAssociation(peer netip.Addr) {
	s.cache.forget(peer)
	s.keeper.forget(peer)
}

// dropSessions deletes every session of a peer, and its usage with it:
// the peer no longer knows these sessions.
func (s *Server) dropSessions(node string) {
	for _, x := range s.sessionsOf(node) {
		if _, err := s.deleteSession(x.SEID); err != nil {
			s.log.Error("pfcp: drop session", "seid", x.SEID, "err", err)
		}
	}
}

// sessionsOf lists the sessions of a peer.
func (s *Server) sessionsOf(node string) []*session.Session {
	var out []*session.Session
	s.store.Sessions(func(x *session.Session) bool {
		if x.Peer == node {
			out = append(out, x)
		}
		return true
	})
	return out
}

// refusal answers a request that could not be decoded or was not allowed,
// with the response type that matches it. Session responses name the
// offending IE; association responses have no place for it (Tables
// 7.4.4.2-1, 7.4.4.4-1, 7.4.4.6-1).
func refusal(h *message.Header, cause uint8, offending uint16, nodeID *ie.IE, recovery time.Time) message.Message {
	seq := h.SequenceNumber
	ies := []*ie.IE{nodeID, ie.NewCause(cause)}
	switch h.Type {
	case message.MsgTypeAssociationSetupRequest:
		return message.NewAssociationSetupResponse(seq, append(ies, ie.NewRecoveryTimeStamp(recovery))...)
	case message.MsgTypeAssociationUpdateRequest:
		return message.NewAssociationUpdateResponse(seq, ies...)
	case message.MsgTypeAssociationReleaseRequest:
		return message.NewAssociationReleaseResponse(seq, ies[0], ies[1])
	}
	if offending != 0 {
		ies = append(ies, ie.NewOffendingIE(offending))
	}
	switch h.Type {
	case message.MsgTypeSessionEstablishmentRequest:
		return message.NewSessionEstablishmentResponse(0, 0, 0, seq, 0, ies...)
	case message.MsgTypeSessionModificationRequest:
		return message.NewSessionModificationResponse(0, 0, 0, seq, 0, ies[1:]...)
	case message.MsgTypeSessionDeletionRequest:
		return message.NewSessionDeletionResponse(0, 0, 0, seq, 0, ies[1:]...)
	}
	return nil
}
