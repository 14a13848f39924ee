package pfcp

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/journal"
	"github.com/sluice-upf/sluice/internal/report"
	"github.com/sluice-upf/sluice/internal/saved"
)

// A new upfd takes over from the one before: it reads the state from the
// journal (OpenState), restores it (Restore), compares it with the maps
// when the one before died rather than stopped (Reconcile), and keeps
// the journal from there on (Keep).

// State is what a journal holds, read back: the last value of each entity.
type State struct {
	entities map[entityKey]saved.Raw
	header   stateHeader
	// Clean: the process that wrote it stopped cleanly. If not, it died,
	// perhaps between a change to the maps and its record (Reconcile).
	Clean bool
	// Tail is how reading the journal ended: a torn last record is cut.
	Tail journal.Tail
}

type entityKey struct{ kind, key string }

// OpenState opens the journal at path and reads the state it holds. An
// error means it cannot be read at all; a journal it opens may still
// hold no state, or another's (For).
func OpenState(path string) (*journal.Journal, *State, error) {
	st := &State{entities: map[entityKey]saved.Raw{}}
	j, tail, err := journal.Open(path, st.add)
	st.Tail = tail
	return j, st, err
}

// add reads one record: its changes, in order.
func (st *State) add(payload []byte) error {
	if len(payload) > 0 && payload[0] == '[' { // JSON, an older upfd's (ours begins with a kind's short length): For refuses it
		st.header = stateHeader{Version: 6}
		return nil
	}
	st.Clean = false
	for len(payload) > 0 {
		var c readChange
		var err error
		if payload, err = saved.Next(payload, &c); err != nil {
			return fmt.Errorf("a record that does not read: %w", err)
		}
		switch c.Kind {
		case kindClosed:
			st.Clean = true
		case kindForget:
			for k := range st.entities {
				if k.kind == kindResponse && forgotten(k.key, c.Key) {
					delete(st.entities, k)
				}
			}
		case kindHeader:
			if err := saved.Read(c.Val, &st.header); err != nil {
				return fmt.Errorf("the header: %w", err)
			}
		default:
			if c.Val == nil {
				delete(st.entities, entityKey{c.Kind, c.Key})
			} else {
				st.entities[entityKey{c.Kind, c.Key}] = c.Val
			}
		}
	}
	return nil
}

// forgotten: the response named key (peer address and port, then its
// sequence number) came from the address peer.
func forgotten(key, peer string) bool {
	ap, err := netip.ParseAddrPort(key[:max(strings.LastIndexByte(key, '/'), 0)])
	return err == nil && ap.Addr().String() == peer
}

// For says why the state is not that of the maps identity names (of this
// version, datapath.Identity), or nil.
func (st *State) For(identity string) error {
	switch h := st.header; {
	case h.Version == 0:
		return errors.New("the journal holds no state")
	case h.Version != stateVersion:
		return fmt.Errorf("the journal is of version %d, this upfd reads %d", h.Version, stateVersion)
	case h.Layout != layout():
		return fmt.Errorf("the journal's saved types are not this upfd's (layout %s; this upfd's is %s)", h.Layout, layout())
	case h.Datapath != identity:
		return fmt.Errorf("the journal describes other maps (%s; these are %s)", h.Datapath, identity)
	}
	return nil
}

// Sessions is how many sessions the state holds.
func (st *State) Sessions() int {
	n := 0
	for k := range st.entities {
		if k.kind == kindSession {
			n++
		}
	}
	return n
}

// of are the values of one kind, in key order.
func (st *State) of(kind string) []saved.Raw {
	var keys []string
	for k := range st.entities {
		if k.kind == kind {
			keys = append(keys, k.key)
		}
	}
	slices.Sort(keys)
	out := make([]saved.Raw, len(keys))
	for i, key := range keys {
		out[i] = st.entities[entityKey{kind, key}]
	}
	return out
}

func (st *State) one(kind string) saved.Raw { return st.entities[entityKey{kind, ""}] }

// Restore takes back the state st holds, into a server that has nothing
// yet, before Serve. Heartbeats start over; reports unanswered are sent
// again by the first retransmission tick.
func (s *Server) Restore(st *State) error {
	var v savedServer
	if err := saved.Read(st.one(kindServer), &v); err != nil {
		return fmt.Errorf("pfcp: restore: %w", err)
	}
	now := s.now()
	s.cfg.Recovery, s.seq = v.Recovery, v.Seq
	s.api.draining.Store(v.Draining)
	err := eachOf(st, kindAssoc, func(a savedAssociation) {
		s.assocs[a.NodeID] = &association{nodeID: a.NodeID, addr: a.Addr, recovery: a.Recovery, since: a.Since, lost: a.Lost, nextHeartbeat: now}
	})
	if err != nil {
		return fmt.Errorf("pfcp: restore: %w", err)
	}
	if err := s.restoreKept(st); err != nil {
		return fmt.Errorf("pfcp: restore: %w", err)
	}
	var responses []savedResponse
	err = eachOf(st, kindResponse, func(r savedResponse) { responses = append(responses, r) })
	slices.SortStableFunc(responses, func(a, b savedResponse) int { return a.Expires.Compare(b.Expires) })
	for _, r := range responses {
		s.cache.put(keyOf(r.From, r.Seq), r.Request, r.B, r.Expires)
	}
	err = errors.Join(err, eachOf(st, kindReport, func(r savedRequest) { s.restoreReport(r, now) }))
	if err != nil {
		return fmt.Errorf("pfcp: restore: %w", err)
	}
	var stores, slots, meters []saved.Raw
	err = eachOf(st, kindSession, func(x savedSession) {
		stores = append(stores, x.Store)
		if x.Rules != nil {
			slots = append(slots, x.Rules)
		}
		if x.Meters != nil {
			meters = append(meters, x.Meters)
		}
	})
	if err != nil {
		return fmt.Errorf("pfcp: restore: %w", err)
	}
	if err := s.store.Restore(st.one(kindStore), stores); err != nil {
		return fmt.Errorf("pfcp: restore sessions: %w", err)
	}
	if err := s.rules.Restore(slots, st.of(kindList), s.store.Get); err != nil {
		return fmt.Errorf("pfcp: restore rules: %w", err)
	}
	if err := s.meters.Restore(meters); err != nil {
		return fmt.Errorf("pfcp: restore meters: %w", err)
	}
	s.log.Info("pfcp: state restored", "sessions", s.store.Len(), "associations", len(s.assocs), "recovery", s.cfg.Recovery,
		"clean", st.Clean)
	return nil
}

// restoreKept takes back the final usage kept for lost peers: the node
// is the entity's key.
func (s *Server) restoreKept(st *State) error {
	for k, raw := range st.entities {
		if k.kind != kindKept {
			continue
		}
		var v savedKept
		if err := saved.Read(raw, &v); err != nil {
			return fmt.Errorf("the usage kept for %s: %w", k.key, err)
		}
		ku := keptUsage{recovery: v.Recovery}
		for _, r := range v.Sessions {
			ku.reports = append(ku.reports, sessionUsage{r.CPSEID, r.Usage})
		}
		s.kept[k.key] = ku
	}
	return nil
}

// eachOf decodes every value of a kind, in key order, and hands it to f.
func eachOf[T any](st *State, kind string, f func(T)) error {
	for _, raw := range st.of(kind) {
		var v T
		if err := saved.Read(raw, &v); err != nil {
			return fmt.Errorf("a %s: %w", kind, err)
		}
		f(v)
	}
	return nil
}

// restoreReport takes back a Session Report Request still unanswered: it
// is sent again at once and ends as any other, its usage put back into
// the meters if it goes unanswered.
func (s *Server) restoreReport(r savedRequest, now time.Time) {
	var cpSEID uint64
	if h, err := message.ParseHeader(r.B); err == nil {
		cpSEID = h.SEID
	}
	seq := r.Seq
	s.pending[seq] = &pending{to: r.To, b: r.B, sent: r.Sent, limit: s.cfg.N1, next: now, typ: sessionReportRequest,
		answered: func(m message.Message) { s.reportAnswered(seq, cpSEID, m) },
		expired:  func() { s.reportUnanswered(seq) }}
	if r.Usage != nil {
		s.trackUsage(seq, *r.Usage)
	}
}

// Keep makes j the server's journal, before Serve: it is written whole
// at once (the state restored, or none), then every change is appended
// before anything that shows it leaves upfd; with fsync, on the disk
// too. identity names the maps the state describes.
func (s *Server) Keep(j *journal.Journal, identity string, fsync bool) error {
	k := newKeeper(j, identity, fsync)
	s.rules.TrackLists()
	var cs []change
	s.entities(identity, func(c change) bool {
		cs = append(cs, c)
		return true
	})
	k.last = s.server()
	if err := k.rewrite(k.changesOf(cs), s.log); err != nil {
		return fmt.Errorf("pfcp: %w", err)
	}
	s.keeper = k // before Serve, which hands the writer goroutine its turns
	return nil
}

// Takeover is what Reconcile found.
type Takeover struct {
	Repaired int // sessions whose entries differed from the state, written again
	Strays   int // lookup entries no session of the state has, removed
	Deleted  int // sessions that could not be written again: deleted, their usage reported
}

// Reconcile compares the maps with the restored state, before Serve,
// after the process before died: it may have died between a change to
// the maps and its record of it. A session whose entries differ is
// written again as the state has it; entries no session has are removed;
// a session that cannot be written again is deleted and its final usage
// reported to its SMF (UISR, TEBUR). The datapath never forwards by
// rules N4 does not know. URR slots are left alone: their counts and
// quota left are the datapath's own.
func (s *Server) Reconcile(dp interface {
	Holds(datapath.Op) (bool, error)
	Lookups() ([]datapath.UplinkKey, []netip.Prefix, error)
}) (Takeover, error) {
	var t Takeover
	owned := map[any]bool{}
	differ := map[uint64][]datapath.Op{} // the sessions to write again, with their ops
	var broken []uint64
	for seid := range s.sessionSEIDs {
		ops, err := s.rules.Installed(seid)
		if err != nil {
			broken = append(broken, seid)
			continue
		}
		for _, op := range ops {
			switch o := op.(type) {
			case datapath.PutUplink:
				owned[o.Key] = true
			case datapath.PutDownlink:
				owned[o.UE] = true
			}
			if _, ok := differ[seid]; !ok {
				if holds, err := dp.Holds(op); err != nil || !holds {
					differ[seid] = ops
				}
			}
		}
	}
	// Strays first: what they hold leaves room for what is written again.
	strays, err := strayLookups(dp, owned)
	if err == nil {
		err = s.dp.Apply(strays)
	}
	if err != nil {
		return t, fmt.Errorf("pfcp: take-over: remove entries no session has: %w", err)
	}
	t.Strays = len(strays)
	for seid, ops := range differ {
		if err := s.dp.Apply(ops); err != nil {
			s.log.Error("pfcp: take-over: a session's entries differ from the state and cannot be written again", "seid", seid, "err", err)
			broken = append(broken, seid)
			continue
		}
		s.log.Warn("pfcp: take-over: a session's entries differed from the state; written again", "seid", seid)
		t.Repaired++
	}
	for _, seid := range broken {
		if s.releaseBroken(seid) {
			t.Deleted++
		}
	}
	return t, nil
}

// strayLookups are the removals of the lookup entries the maps hold and
// no session owns.
func strayLookups(dp interface {
	Lookups() ([]datapath.UplinkKey, []netip.Prefix, error)
}, owned map[any]bool) ([]datapath.Op, error) {
	up, down, err := dp.Lookups()
	if err != nil {
		return nil, err
	}
	var ops []datapath.Op
	for _, k := range up {
		if !owned[k] {
			ops = append(ops, datapath.DelUplink{Key: k})
		}
	}
	for _, k := range down {
		if !owned[k] {
			ops = append(ops, datapath.DelDownlink{UE: k})
		}
	}
	return ops, nil
}

// releaseBroken deletes a session the datapath cannot hold as the state
// has it, and tells its SMF: its final usage, as a termination by the UP
// function (TEBUR), in a report that asks for the session's release (UISR,
// §5.18).
func (s *Server) releaseBroken(seid uint64) bool {
	x, ok := s.store.Get(seid)
	if !ok {
		return false
	}
	usage, err := s.deleteSession(seid)
	if err != nil {
		s.log.Error("pfcp: take-over: delete a session that cannot be installed", "seid", seid, "err", err)
		return false
	}
	for i := range usage {
		usage[i].Trigger = report.TrigTEBUR
	}
	ies := append([]*ie.IE{ie.New(ie.ReportType, []byte{reportUISR | reportUSAR})},
		usageIEs(ie.NewUsageReportWithinSessionReportRequest, usage)...)
	if a, ok := s.assocs[x.Peer]; ok {
		s.reportTo(a.addr, x.CPSEID, ies...)
	}
	return true
}

// Report Type bits (§8.2.21) of the report releaseBroken sends.
const (
	reportUSAR = 1 << 1
	reportUISR = 1 << 6
)
