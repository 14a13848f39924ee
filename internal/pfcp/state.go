package pfcp

import (
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/report"
	"github.com/sluice-upf/sluice/internal/rules"
	"github.com/sluice-upf/sluice/internal/saved"
	"github.com/sluice-upf/sluice/internal/session"
)

// What N4 knows outlives the process when upfd keeps the datapath (pinned
// maps): a journal (keeper.go) holds it, written as it changes, and the
// next process takes it back. The SMFs must not notice: the Recovery Time
// Stamp stays the same (a new one tells an SMF that every session is
// gone, §19A), the associations, sessions and meters come back as they
// were, responses kept for retransmitted requests are still answered from
// the cache, and usage reports still unanswered are sent again (and go
// back into their meters should they stay unanswered). What is lost:
// frames buffered in memory (they are dropped, as on overflow) and the
// GTP-U path state, which Echo learns again.
//
// The state is a set of entities, each a kind and a key with its value,
// saved apart, so that the journal writes only those that changed: a
// record is a list of changes, and the last change of an entity wins.

// stateVersion changes when the journal's form does: a journal of
// another version is not read. 6: the journal of entities; 7: in the
// saved package's binary encoding (a record of JSON is version 6 or older).
// A change to a saved type changes the header's Layout instead.
const stateVersion = 7

// Kinds of entity.
const (
	kindHeader   = "header"   // "": stateHeader
	kindServer   = "server"   // "": savedServer
	kindStore    = "store"    // "": where the store's allocation goes on
	kindAssoc    = "assoc"    // node ID: savedAssociation
	kindKept     = "kept"     // node ID: a lost peer's final usage
	kindResponse = "response" // peer and sequence number: savedResponse
	kindForget   = "forget"   // peer address: its responses are gone (a change, not an entity)
	kindReport   = "report"   // our sequence number: a Session Report Request unanswered
	kindSession  = "session"  // SEID: savedSession
	kindList     = "list"     // lookup key (rules.ListName): its PDR list
	kindClosed   = "closed"   // "": the process stopped cleanly (a change, not an entity)
)

// change is an entity's new value, or none (nil): it is gone. The value
// is encoded later, by the goroutine that writes the journal: it is a
// copy, or immutable, never what the serve loop goes on changing.
type change struct {
	Kind, Key string
	Val       any // a pointer to the value, saved as its encoding in a blob
}

// readChange is a change as a journal gives it back.
type readChange struct {
	Kind, Key string
	Val       saved.Raw
}

type stateHeader struct {
	Version  int
	Datapath string // datapath.Identity of the maps the state describes
	Layout   string // saved.Layout of the saved types: another is not read
}

// savedTypes are every type the state saves, each part's own included:
// their declarations make the header's Layout.
func savedTypes() []any {
	own := []any{savedServer{}, savedAssociation{}, savedKept{}, savedResponse{}, savedRequest{}}
	return slices.Concat(own, session.SavedTypes(), rules.SavedTypes(), report.SavedTypes())
}

var layout = sync.OnceValue(func() string { return saved.Layout(savedTypes()...) })

// savedServer is the server's own state.
type savedServer struct {
	Recovery time.Time
	Seq      uint32
	Draining bool // new sessions refused (the API's drain)
}

type savedAssociation struct {
	NodeID   string
	Addr     netip.AddrPort
	Recovery time.Time
	Since    time.Time
	Lost     time.Time
}

type savedKept struct {
	Recovery time.Time
	Sessions []savedUsage
}

type savedUsage struct {
	CPSEID uint64
	Usage  []report.Usage
}

type savedResponse struct {
	From    netip.AddrPort
	Seq     uint32
	Request uint64
	B       []byte
	Expires time.Time
}

type savedRequest struct {
	To    netip.AddrPort
	Seq   uint32
	B     []byte
	Sent  int
	Usage *sentUsage // what a usage report carries, to go back into the meters if unanswered
}

// sessionParts is a session as each part of upfd keeps it: the store's
// rules, the compiler's slots, the meters; each saves its own.
type sessionParts struct {
	Store, Rules, Meters any
}

// savedSession is sessionParts read back.
type savedSession struct {
	Store, Rules, Meters saved.Raw
}

func set(kind, key string, v any) change { return change{kind, key, v} }

// record appends to b a journal record of a list of changes: their
// encodings, one after the other; placed, if not nil, is told where each
// lies in it.
func record(b []byte, cs []change, placed func(c change, start, n int)) []byte {
	for i, c := range cs {
		start := len(b)
		b = saved.Append(b, &cs[i])
		if placed != nil {
			placed(c, start, len(b)-start)
		}
	}
	return b
}

func gone(kind, key string) change { return change{Kind: kind, Key: key} }

func responseName(k cacheKey) string {
	var buf [64]byte // made on the stack: the string is the one allocation
	b := append(k.from().AppendTo(buf[:0]), '/')
	return string(strconv.AppendUint(b, uint64(k.seq), 10))
}

func seidName(seid uint64) string { return strconv.FormatUint(seid, 16) }

func seqName(seq uint32) string { return strconv.FormatUint(uint64(seq), 10) }

// server is the server's own state as saved.
func (s *Server) server() savedServer {
	return savedServer{Recovery: s.cfg.Recovery, Seq: s.seq, Draining: s.Draining()}
}

// assocChange is an association's state, or its end.
func (s *Server) assocChange(node string) change {
	a, ok := s.assocs[node]
	if !ok {
		return gone(kindAssoc, node)
	}
	return set(kindAssoc, node, &savedAssociation{a.nodeID, a.addr, a.recovery, a.since, a.lost})
}

func (s *Server) keptChange(node string) change {
	k, ok := s.kept[node]
	if !ok {
		return gone(kindKept, node)
	}
	v := savedKept{Recovery: k.recovery}
	for _, r := range k.reports {
		v.Sessions = append(v.Sessions, savedUsage{r.cpSEID, r.usage})
	}
	return set(kindKept, node, &v)
}

// responseChange is a kept response; ok is false if it is no longer kept.
func (s *Server) responseChange(k cacheKey) (change, bool) {
	e, ok := s.cache.index[k]
	if !ok {
		return change{}, false
	}
	return set(kindResponse, responseName(k), &savedResponse{k.from(), k.seq, e.req, s.cache.bytes(e.at), time.Unix(0, e.expires)}), true
}

// reportChange is a Session Report Request still unanswered, or its end.
func (s *Server) reportChange(seq uint32) change {
	p, ok := s.pending[seq]
	if !ok || p.typ != sessionReportRequest {
		return gone(kindReport, seqName(seq))
	}
	r := savedRequest{To: p.to, Seq: seq, B: p.b, Sent: p.sent}
	if u, ok := s.usageSent[seq]; ok {
		r.Usage = &u
	}
	return set(kindReport, seqName(seq), &r)
}

// sessionChange is a session as every part keeps it, or its end.
func (s *Server) sessionChange(seid uint64) change {
	st, ok := s.store.SaveSession(seid)
	if !ok {
		return gone(kindSession, seidName(seid))
	}
	v := sessionParts{Store: st}
	if r, ok := s.rules.SaveSession(seid); ok {
		v.Rules = r
	}
	if m, ok := s.meters.SaveSession(seid); ok {
		v.Meters = m
	}
	return set(kindSession, seidName(seid), &v)
}

func (s *Server) listChange(key any) change {
	if v, ok := s.rules.SaveList(key); ok {
		return set(kindList, rules.ListName(key), v)
	}
	return gone(kindList, rules.ListName(key))
}

// entities yields every entity as a change, the header first, in a stable
// order (sessions and lists aside, which come in map order).
func (s *Server) entities(identity string, yield func(change) bool) {
	emit := yield
	if !emit(set(kindHeader, "", &stateHeader{stateVersion, identity, layout()})) || !emit(set(kindServer, "", new(s.server()))) ||
		!emit(set(kindStore, "", s.store.SaveGlobals())) {
		return
	}
	for _, node := range slices.Sorted(maps.Keys(s.assocs)) {
		if !emit(s.assocChange(node)) {
			return
		}
	}
	for _, node := range slices.Sorted(maps.Keys(s.kept)) {
		if !emit(s.keptChange(node)) {
			return
		}
	}
	for k := range s.cache.all() {
		if c, ok := s.responseChange(k); ok && !emit(c) {
			return
		}
	}
	for _, seq := range slices.Sorted(maps.Keys(s.pending)) {
		if s.pending[seq].typ == sessionReportRequest && !emit(s.reportChange(seq)) {
			return
		}
	}
	for seid := range s.sessionSEIDs {
		if !emit(s.sessionChange(seid)) {
			return
		}
	}
	for key := range s.rules.Lists {
		if !emit(s.listChange(key)) {
			return
		}
	}
}

// sessionSEIDs yields every session's SEID.
func (s *Server) sessionSEIDs(yield func(uint64) bool) {
	s.store.Sessions(func(x *session.Session) bool { return yield(x.SEID) })
}

var sessionReportRequest = message.NewSessionReportRequest(0, 0, 0, 0, 0).MessageTypeName()
