package pfcp

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
)

// What the REST API reads of the server, and the one thing it sets.
//
// Ready, Associations, Sessions and Session read what the serve loop owns,
// through Do: they wait for the loop, and what they return is the API's
// to keep (sessions are never changed in place; the rest is copied).
// Whatever visits every session copies pointers in the loop and does the
// rest outside it, so that N4 waits as little as possible.
// Draining, SetDraining, NodeID and Recovery need no loop.

// apiState is what the API sets and the serve loop reads.
type apiState struct {
	draining atomic.Bool
}

// SetDraining turns draining on or off. While on, Session Establishment
// Requests are refused with cause No resources available (TS 29.244
// §8.2.1), so that SMFs choose another UPF; existing sessions are
// modified, reported, deleted and forwarded as before.
func (s *Server) SetDraining(on bool) {
	if s.api.draining.Swap(on) == on {
		return
	}
	if on {
		s.log.Warn("pfcp: draining: new sessions are refused (No resources available)")
	} else {
		s.log.Info("pfcp: draining ended: new sessions are accepted")
	}
}

// Draining reports whether new sessions are refused.
func (s *Server) Draining() bool { return s.api.draining.Load() }

// refusingNewSessions: the establishment is to be refused, as the UPF
// drains.
func (s *Server) refusingNewSessions(from netip.AddrPort, cpSEID uint64) bool {
	if !s.api.draining.Load() {
		return false
	}
	s.log.Info("pfcp: session establishment refused: draining", "from", from, "cp_seid", cpSEID)
	return true
}

// NodeID is our node ID as configured.
func (s *Server) NodeID() string { return s.cfg.NodeID }

// Recovery is our Recovery Time Stamp: when we started.
func (s *Server) Recovery() time.Time { return s.cfg.Recovery }

// Association is an SMF's association as the API shows it.
type Association struct {
	NodeID   string
	Addr     netip.AddrPort
	Recovery time.Time // the peer's Recovery Time Stamp
	Since    time.Time // when the association was set up
	// LostSince is when a heartbeat went unanswered; zero while the peer
	// answers.
	LostSince time.Time
	Sessions  int
}

// Ready returns nil when the serve loop runs a function for us: N4 is
// being served.
func (s *Server) Ready(ctx context.Context) error { return s.Do(ctx, func() {}) }

// Associations lists the associations by node ID, with their sessions
// counted.
func (s *Server) Associations(ctx context.Context) ([]Association, error) {
	var out []Association
	var all []*session.Session
	err := s.Do(ctx, func() {
		all = s.snapshot()
		for _, a := range s.assocs {
			out = append(out, Association{NodeID: a.nodeID, Addr: a.addr, Recovery: a.recovery, Since: a.since, LostSince: a.lost})
		}
	})
	if err != nil {
		return nil, err
	}
	count := map[string]int{}
	for _, x := range all {
		count[x.Peer]++
	}
	for i := range out {
		out[i].Sessions = count[out[i].NodeID]
	}
	slices.SortFunc(out, func(a, b Association) int { return strings.Compare(a.NodeID, b.NodeID) })
	return out, nil
}

// snapshot is every session, in no order. In the loop.
func (s *Server) snapshot() []*session.Session {
	all := make([]*session.Session, 0, s.store.Len())
	s.store.Sessions(func(x *session.Session) bool {
		all = append(all, x)
		return true
	})
	return all
}

// SessionFilter selects sessions; its zero value selects all.
type SessionFilter struct {
	Peer string     // the association's node ID
	UE   netip.Addr // an address a PDR matches as the UE's (IPv6: in its prefix)
	// TEID, with MatchTEID, is a PDR's local F-TEID or a tunnel a FAR
	// sends into.
	TEID      uint32
	MatchTEID bool
}

func (f SessionFilter) matches(x *session.Session) bool {
	if f.Peer != "" && x.Peer != f.Peer {
		return false
	}
	if f.UE.IsValid() && !hasUE(x, f.UE) {
		return false
	}
	return !f.MatchTEID || hasTEID(x, f.TEID)
}

func hasUE(x *session.Session, a netip.Addr) bool {
	for _, p := range x.PDRs.All() {
		if u := p.PDI.UEIP; u != nil && (u.V4 == a || u.V6.IsValid() && u.V6.Contains(a)) {
			return true
		}
	}
	return false
}

func hasTEID(x *session.Session, teid uint32) bool {
	for _, p := range x.PDRs.All() {
		if f := p.PDI.FTEID; f != nil && f.TEID == teid {
			return true
		}
	}
	for _, f := range x.FARs.All() {
		if f.Forw != nil && f.Forw.OHC != nil && f.Forw.OHC.TEID == teid {
			return true
		}
	}
	return false
}

// SessionPage is a page of sessions in SEID order.
type SessionPage struct {
	Sessions []*session.Session // SEIDs ascending
	Total    int                // sessions the filter selects, on every page
	More     bool               // selected sessions follow the last of this page
}

// Sessions is the page of at most limit sessions that f selects, with
// SEIDs above after. Without a filter, the SEIDs after the cursor are
// looked up one by one (SEIDs are handed out in order, so that is about
// limit lookups); otherwise, or when deletions have left too many gaps,
// every session is visited: the loop copies their pointers (some 60 ms
// for 1,000,000 sessions on a small VM) and the filter runs outside it.
func (s *Server) Sessions(ctx context.Context, f SessionFilter, after uint64, limit int) (SessionPage, error) {
	if f == (SessionFilter{}) {
		var p SessionPage
		var ok bool
		if err := s.Do(ctx, func() { p, ok = s.probePage(after, limit) }); err != nil || ok {
			return p, err
		}
	}
	var all []*session.Session
	if err := s.Do(ctx, func() { all = s.snapshot() }); err != nil {
		return SessionPage{}, err
	}
	return PageOf(slices.Values(all), f, after, limit), nil
}

// probePage looks the SEIDs after the cursor up one by one. It gives up
// (false) after probing a few times limit of them without filling the
// page and finding one more: the last page, or a store with wide gaps.
// In the loop.
func (s *Server) probePage(after uint64, limit int) (SessionPage, bool) {
	p := SessionPage{Total: s.store.Len()}
	if limit <= 0 || after > math.MaxUint64-uint64(probesPer*limit+probesExtra) {
		return p, false
	}
	last := after + uint64(probesPer*limit+probesExtra)
	for seid := after + 1; seid <= last; seid++ {
		x, ok := s.store.Get(seid)
		if !ok {
			continue
		}
		if len(p.Sessions) == limit {
			p.More = true
			return p, true
		}
		p.Sessions = append(p.Sessions, x)
	}
	return p, false
}

// A page is looked up SEID by SEID through at most probesPer*limit +
// probesExtra SEIDs.
const probesPer, probesExtra = 4, 64

// PageOf is the page of the sessions that each yields, as Sessions
// gives it: it keeps the page in a heap of limit, so a page of 100 among
// 1,000,000 sessions allocates next to nothing.
func PageOf(each iter.Seq[*session.Session], f SessionFilter, after uint64, limit int) SessionPage {
	var p SessionPage
	h := &bySEIDDesc{}
	each(func(x *session.Session) bool {
		if !f.matches(x) {
			return true
		}
		p.Total++
		if x.SEID <= after || limit <= 0 {
			return true
		}
		switch {
		case h.Len() < limit:
			heap.Push(h, x)
		case x.SEID < (*h)[0].SEID:
			(*h)[0] = x
			heap.Fix(h, 0)
			p.More = true
		default:
			p.More = true
		}
		return true
	})
	p.Sessions = slices.SortedFunc(slices.Values(*h), func(a, b *session.Session) int {
		return cmp.Compare(a.SEID, b.SEID)
	})
	return p
}

// bySEIDDesc is a max-heap of sessions by SEID: its top is the page's
// last, the first to leave for a smaller one.
type bySEIDDesc []*session.Session

func (h bySEIDDesc) Len() int           { return len(h) }
func (h bySEIDDesc) Less(i, j int) bool { return h[i].SEID > h[j].SEID }
func (h bySEIDDesc) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *bySEIDDesc) Push(x any)        { *h = append(*h, x.(*session.Session)) }
func (h *bySEIDDesc) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// ErrNoSession is Session's answer for an SEID no session has.
var ErrNoSession = errors.New("no such session")

// SessionView is a session with what its URRs have counted.
type SessionView struct {
	Session *session.Session
	// Usage is each URR's traffic since the URR was created, by URR ID,
	// read from the datapath when Session was called.
	Usage map[uint32]datapath.Usage
}

// Session is the session with our SEID, with its URRs' counters read
// from the datapath.
func (s *Server) Session(ctx context.Context, seid uint64) (SessionView, error) {
	var v SessionView
	var err error
	if derr := s.Do(ctx, func() { v, err = s.sessionView(seid) }); derr != nil {
		return SessionView{}, derr
	}
	return v, err
}

func (s *Server) sessionView(seid uint64) (SessionView, error) {
	x, ok := s.store.Get(seid)
	if !ok {
		return SessionView{}, fmt.Errorf("session %#x: %w", seid, ErrNoSession)
	}
	v := SessionView{Session: x, Usage: make(map[uint32]datapath.Usage, x.URRs.Len())}
	for id, slot := range s.rules.URRSlots(seid) {
		u, err := s.dp.Usage(slot)
		if err != nil {
			return SessionView{}, fmt.Errorf("session %#x: urr %d: %w", seid, id, err)
		}
		v.Usage[id] = u
	}
	return v, nil
}
