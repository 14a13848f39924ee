package session

import (
	"fmt"
	"maps"
	"net/netip"

	"github.com/sluice-upf/sluice/internal/saved"
)

// SaveGlobals, SaveSession and Restore carry the Store across a restart
// of upfd that keeps the datapath (pinned maps): where allocation goes
// on, and each session, saved apart so that a journal can write the one
// that changed.

// savedStore is the Store's own state.
type savedStore struct {
	NextSEID uint64
	NextTEID uint32
	PoolNext map[netip.Prefix]netip.Addr
}

// savedSession is a session as saved: a RuleSet keeps its rules to itself.
type savedSession struct {
	SEID, CPSEID uint64
	CPAddr       netip.Addr
	Peer         string
	Info         Info
	PDRs         []PDR
	FARs         []FAR
	QERs         []QER
	URRs         []URR
	BARs         []BAR
}

// SaveGlobals is a copy of the store's own state, for saved.Append, on
// any goroutine.
func (s *Store) SaveGlobals() any { return &savedStore{s.nextSEID, s.nextTEID, maps.Clone(s.poolNext)} }

// SaveSession is a session, for saved.Append, on any goroutine (sessions
// do not change: a change makes a new one); false if there is none.
func (s *Store) SaveSession(seid uint64) (any, bool) {
	x, ok := s.sessions[seid]
	if !ok {
		return nil, false
	}
	return &savedSession{SEID: x.SEID, CPSEID: x.CPSEID, CPAddr: x.CPAddr, Peer: x.Peer, Info: x.Info,
		PDRs: x.PDRs.rules, FARs: x.FARs.rules, QERs: x.QERs.rules, URRs: x.URRs.rules, BARs: x.BARs.rules}, true
}

// Restore reads what SaveGlobals and SaveSession made into an empty
// store: the sessions come back owning their TEIDs, UE addresses and
// tunnels, and their GBRs are counted afresh against this store's
// capacity.
func (s *Store) Restore(globals saved.Raw, sessions []saved.Raw) error {
	if len(s.sessions) > 0 {
		return fmt.Errorf("restore into a store with %d sessions", len(s.sessions))
	}
	var st savedStore
	if err := saved.Read(globals, &st); err != nil {
		return fmt.Errorf("restore the store: %w", err)
	}
	s.nextSEID, s.nextTEID = st.NextSEID, st.NextTEID
	if st.PoolNext != nil {
		s.poolNext = st.PoolNext
	}
	for _, raw := range sessions {
		var v savedSession
		if err := saved.Read(raw, &v); err != nil {
			return fmt.Errorf("restore a session: %w", err)
		}
		x := &Session{SEID: v.SEID, CPSEID: v.CPSEID, CPAddr: v.CPAddr, Peer: v.Peer, Info: v.Info,
			PDRs: RuleSet[uint16, PDR]{v.PDRs}, FARs: RuleSet[uint32, FAR]{v.FARs},
			QERs: RuleSet[uint32, QER]{v.QERs}, URRs: RuleSet[uint32, URR]{v.URRs}, BARs: RuleSet[uint8, BAR]{v.BARs}}
		if _, dup := s.sessions[x.SEID]; dup {
			return fmt.Errorf("restore: session %#x twice", x.SEID)
		}
		s.adopt(x)
	}
	return nil
}

// adopt indexes a session as an establishment would have.
func (s *Store) adopt(x *Session) {
	s.sessions[x.SEID] = x
	s.byCP[cpKey{x.Peer, x.CPSEID}] = x.SEID
	for _, p := range x.PDRs.All() {
		if f := p.PDI.FTEID; f != nil {
			s.teids[f.TEID] = x.SEID
		}
		if u := p.PDI.UEIP; u != nil {
			for _, a := range []netip.Addr{u.V4, u.V6.Masked().Addr()} {
				if a.IsValid() {
					s.ues[a] = x.SEID
				}
			}
		}
	}
	s.indexTunnels(x, true)
	s.adoptGBR(x)
}

// SavedTypes are the types this package saves, for the journal's Layout.
func SavedTypes() []any { return []any{savedStore{}, savedSession{}} }
