package session

import (
	"net/netip"
	"slices"
)

// Options are what the Store allocates from.
type Options struct {
	TEIDFirst, TEIDLast uint32
	// Local GTP-U addresses by source interface: a chosen F-TEID of an
	// Access PDR gets an N3 address, of a Core PDR an N9 address.
	AccessAddrs, CoreAddrs []netip.Addr
	// UE address pools by network instance (DNN); "" is the default.
	Pools       map[string][]netip.Prefix
	MaxSessions int
	// MaxPDRs is the most PDRs one session may have; 0: no limit.
	MaxPDRs int
	// GBRCapacity is the guaranteed bit rate the UPF admits in total, per
	// direction (gbr.go); 0: no limit.
	GBRCapacity BitRates
}

// Store holds the sessions and what they own: SEIDs, TEIDs, UE addresses.
// It is not safe for concurrent use: the PFCP server is its one user.
type Store struct {
	opts     Options
	sessions map[uint64]*Session
	byCP     map[cpKey]uint64
	teids    map[uint32]uint64     // TEID -> SEID (TEIDs are unique per UPF)
	ues      map[netip.Addr]uint64 // UE address (or IPv6 prefix base) -> SEID
	// tunnels are where FARs send (outer header creation) -> SEID: a
	// peer's Error Indication names one. A tunnel two sessions share
	// (never, with real peers) names the first.
	tunnels  map[tunnel]uint64
	nextSEID uint64
	nextTEID uint32
	poolNext map[netip.Prefix]netip.Addr
	gbr      gbrBook
}

type cpKey struct {
	peer string
	seid uint64
}

// NewStore makes an empty Store.
func NewStore(opts Options) *Store {
	return &Store{
		opts:     opts,
		sessions: map[uint64]*Session{},
		byCP:     map[cpKey]uint64{},
		teids:    map[uint32]uint64{},
		ues:      map[netip.Addr]uint64{},
		tunnels:  map[tunnel]uint64{},
		nextSEID: 1,
		nextTEID: opts.TEIDFirst,
		poolNext: map[netip.Prefix]netip.Addr{},
	}
}

// Get returns the session with our SEID.
func (s *Store) Get(seid uint64) (*Session, bool) {
	x, ok := s.sessions[seid]
	return x, ok
}

// tunnel is a GTP-U tunnel toward a peer.
type tunnel struct {
	peer netip.Addr
	teid uint32
}

// SendingTo finds the session whose FAR sends into teid at peer.
func (s *Store) SendingTo(peer netip.Addr, teid uint32) (uint64, bool) {
	seid, ok := s.tunnels[tunnel{peer, teid}]
	return seid, ok
}

// indexTunnels adds (or, with add false, removes) x's tunnels.
func (s *Store) indexTunnels(x *Session, add bool) {
	for _, f := range x.FARs.All() {
		if f.Forw == nil || f.Forw.OHC == nil {
			continue
		}
		k := tunnel{f.Forw.OHC.Peer, f.Forw.OHC.TEID}
		owner, taken := s.tunnels[k]
		switch {
		case add && !taken:
			s.tunnels[k] = x.SEID
		case !add && owner == x.SEID:
			delete(s.tunnels, k)
		}
	}
}

// Len is the number of sessions.
func (s *Store) Len() int { return len(s.sessions) }

// MaxSessions is how many sessions the store takes; 0: no limit.
func (s *Store) MaxSessions() int { return s.opts.MaxSessions }

// Sessions calls f for every session until it returns false.
func (s *Store) Sessions(f func(*Session) bool) {
	for _, x := range s.sessions {
		if !f(x) {
			return
		}
	}
}

// Change is a planned, not yet committed, change: Prev (nil when
// establishing) becomes Next (nil when deleting). What it reserved is held
// until Commit or Abort.
type Change struct {
	Prev, Next *Session
	// Created lists the PDRs whose F-TEID or UE address the UPF chose,
	// for the response's Created PDR IEs.
	Created    []CreatedPDR
	Query      []uint32 // URRs to report at once (Query URR, QAURR)
	DropBuffer bool

	teids    []uint32     // reserved for Next
	freeTEID []uint32     // released when committed
	ues      []netip.Addr // reserved for Next
	freeUE   []netip.Addr
	gbr      gbrClaim // GBR admitted for Next, held until committed
}

// CreatedPDR is what the UPF chose for a PDR.
type CreatedPDR struct {
	ID    uint16
	FTEID *FTEID
	UEIP  *UEIP
}

// Plan validates req as a whole against the current state and works out
// the session it yields, reserving TEIDs, addresses and guaranteed bit
// rate. Nothing is in force until Commit.
func (s *Store) Plan(req Request) (*Change, error) {
	var c *Change
	var err error
	switch r := req.(type) {
	case *Establish:
		c, err = s.planEstablish(r)
	case *Modify:
		c, err = s.planModify(r)
	case *Delete:
		c, err = s.planDelete(r)
	default:
		return nil, refuse(CauseRequestRejected, 0, "unknown request %T", req)
	}
	if err == nil && c.Next != nil && s.opts.MaxPDRs > 0 && c.Next.PDRs.Len() > s.opts.MaxPDRs {
		err = refuse(CauseNoResources, IECreatePDR, "%d PDRs in the session: at most %d (max_pdrs_per_session)", c.Next.PDRs.Len(), s.opts.MaxPDRs)
	}
	if err == nil {
		err = s.admitGBR(c, req)
	}
	if err != nil {
		if c != nil {
			s.Abort(c)
		}
		return nil, err
	}
	return c, nil
}

// Commit puts a planned change in force.
func (s *Store) Commit(c *Change) {
	s.commitGBR(c)
	for _, t := range c.freeTEID {
		delete(s.teids, t)
	}
	for _, a := range c.freeUE {
		delete(s.ues, a)
	}
	if c.Prev != nil {
		s.indexTunnels(c.Prev, false)
	}
	if c.Next != nil {
		s.indexTunnels(c.Next, true)
	}
	if c.Prev != nil && c.Next == nil {
		delete(s.sessions, c.Prev.SEID)
		delete(s.byCP, cpKey{c.Prev.Peer, c.Prev.CPSEID})
		return
	}
	if c.Prev != nil && c.Prev.CPSEID != c.Next.CPSEID { // the SMF changed its F-SEID
		delete(s.byCP, cpKey{c.Prev.Peer, c.Prev.CPSEID})
	}
	s.sessions[c.Next.SEID] = c.Next
	s.byCP[cpKey{c.Next.Peer, c.Next.CPSEID}] = c.Next.SEID
}

// Abort releases what a planned change reserved.
func (s *Store) Abort(c *Change) {
	s.releaseGBR(c)
	for _, t := range c.teids {
		delete(s.teids, t)
	}
	for _, a := range c.ues {
		delete(s.ues, a)
	}
}

func (s *Store) planEstablish(r *Establish) (*Change, error) {
	if s.opts.MaxSessions > 0 && len(s.sessions) >= s.opts.MaxSessions {
		return nil, refuse(CauseNoResources, 0, "%d sessions: the configured maximum", len(s.sessions))
	}
	if old, dup := s.byCP[cpKey{r.Peer, r.CPSEID}]; dup {
		return nil, refuse(CauseRequestRejected, IEFSEID, "CP F-SEID %#x of %s is already session %#x", r.CPSEID, r.Peer, old)
	}
	next := &Session{SEID: s.newSEID(), CPSEID: r.CPSEID, CPAddr: r.CPAddr, Peer: r.Peer, Info: r.Info}
	c := &Change{Next: next}
	if err := addAll(next, r.PDRs, r.FARs, r.QERs, r.URRs, r.BARs); err != nil {
		return c, err
	}
	if next.PDRs.Len() == 0 {
		return c, refuse(CauseMandatoryIEMissing, IECreatePDR, "no Create PDR")
	}
	if next.FARs.Len() == 0 {
		return c, refuse(CauseMandatoryIEMissing, IECreateFAR, "no Create FAR")
	}
	if err := s.allocate(c, r.PDRs); err != nil {
		return c, err
	}
	if err := resolveSDFRefs(next); err != nil {
		return c, err
	}
	return c, validate(next)
}

func (s *Store) newSEID() uint64 {
	for {
		// SEIDs stay within 32 bits: the datapath names sessions so.
		id := s.nextSEID
		s.nextSEID = (s.nextSEID + 1) & 0xffffffff
		if _, used := s.sessions[id]; !used && id != 0 {
			return id
		}
	}
}

func (s *Store) planDelete(r *Delete) (*Change, error) {
	prev, ok := s.sessions[r.SEID]
	if !ok {
		return nil, refuse(CauseNoSession, 0, "no session %#x", r.SEID)
	}
	c := &Change{Prev: prev}
	for _, p := range prev.PDRs.All() {
		c.release(p)
	}
	return c, nil
}

// release marks what PDR p owns to be freed on commit.
func (c *Change) release(p PDR) {
	if f := p.PDI.FTEID; f != nil && !slices.Contains(c.freeTEID, f.TEID) {
		c.freeTEID = append(c.freeTEID, f.TEID)
	}
	if u := p.PDI.UEIP; u != nil {
		for _, a := range []netip.Addr{u.V4, u.V6.Addr()} {
			if a.IsValid() && !slices.Contains(c.freeUE, a) {
				c.freeUE = append(c.freeUE, a)
			}
		}
	}
}

func (s *Store) planModify(r *Modify) (*Change, error) {
	prev, ok := s.sessions[r.SEID]
	if !ok {
		return nil, refuse(CauseNoSession, 0, "no session %#x", r.SEID)
	}
	next := prev.Clone()
	c := &Change{Prev: prev, Next: next, Query: r.QueryURRs, DropBuffer: r.DropBuffer}
	if cp := r.CP; cp != nil {
		if other, used := s.byCP[cpKey{prev.Peer, cp.SEID}]; used && other != prev.SEID {
			return c, refuse(CauseRequestRejected, IEFSEID, "CP F-SEID %#x of %s is already session %#x", cp.SEID, prev.Peer, other)
		}
		next.CPSEID, next.CPAddr = cp.SEID, cp.Addr
	}
	if r.QueryAll {
		c.Query = slices.AppendSeq(c.Query, prev.URRs.IDs())
	}
	if err := removeAll(next, r); err != nil {
		return c, err
	}
	if err := addAll(next, r.CreatePDRs, r.CreateFARs, r.CreateQERs, r.CreateURRs, r.CreateBARs); err != nil {
		return c, err
	}
	if err := updateAll(next, r); err != nil {
		return c, err
	}
	for _, id := range r.QueryURRs {
		if !next.URRs.Has(id) {
			return c, refuse(CauseRuleFailure, IEURRID, "query of URR %d, which the session does not have", id)
		}
	}
	// What removed or replaced PDRs owned is released; new ones allocated.
	for id, p := range prev.PDRs.All() {
		if q, kept := next.PDRs.Get(id); !kept || !sameOwnership(p, q) {
			c.release(p)
		}
	}
	var fresh []PDR
	for _, p := range r.CreatePDRs {
		fresh = append(fresh, p)
	}
	for _, u := range r.UpdatePDRs {
		if u.PDI != nil {
			p, _ := next.PDRs.Get(u.ID)
			fresh = append(fresh, p)
		}
	}
	if err := s.allocate(c, fresh); err != nil {
		return c, err
	}
	// Kept ownership stays with the session.
	for _, p := range next.PDRs.All() {
		c.keep(p)
	}
	if err := resolveSDFRefs(next); err != nil {
		return c, err
	}
	return c, validate(next)
}

// sameOwnership: the PDR keeps its F-TEID and UE address.
func sameOwnership(a, b PDR) bool {
	return a.PDI.FTEID == b.PDI.FTEID && a.PDI.UEIP == b.PDI.UEIP
}

// keep drops from the release lists whatever p (still in the session) owns.
func (c *Change) keep(p PDR) {
	if f := p.PDI.FTEID; f != nil {
		c.freeTEID = slices.DeleteFunc(c.freeTEID, func(t uint32) bool { return t == f.TEID })
	}
	if u := p.PDI.UEIP; u != nil {
		c.freeUE = slices.DeleteFunc(c.freeUE, func(a netip.Addr) bool { return a == u.V4 || a == u.V6.Addr() })
	}
}
