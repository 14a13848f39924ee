package pfcp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/report"
)

// Save and Restore carry N4 across a restart of upfd that keeps the
// datapath (pinned maps). The SMFs must not notice: the Recovery Time
// Stamp stays the same (a new one tells an SMF that every session is
// gone, §19A), the associations, sessions and meters come back as they
// were, responses cached for retransmitted requests are still answered
// from the cache, and usage reports still unanswered are sent again (and
// go back into their meters should they stay unanswered). What is lost:
// frames buffered in memory (they are dropped, as on overflow) and the
// GTP-U path state, which Echo learns again.

// savedServer is the server's own state; the store, the compiler and the
// meters follow it in the stream, each saving its own.
type savedServer struct {
	Recovery     time.Time
	Seq          uint32
	Associations []savedAssociation
	Kept         map[string]savedKept
	Responses    []savedResponse
	Reports      []savedRequest // Session Report Requests not yet answered
	Draining     bool           // new sessions refused (the API's drain)
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
	To   netip.AddrPort
	Seq  uint32
	B    []byte
	Sent int
	// Usage is what a usage report carries, to go back into the meters
	// if it goes unanswered; a file from before it was saved has none.
	Usage *sentUsage `json:",omitempty"`
}

// Save writes everything N4 knows. Call it once Serve has returned, and
// without final reports: the sessions live on in the datapath.
func (s *Server) Save(enc *json.Encoder) error {
	v := savedServer{Recovery: s.cfg.Recovery, Seq: s.seq, Kept: map[string]savedKept{}, Draining: s.Draining()}
	for _, a := range s.assocs {
		v.Associations = append(v.Associations, savedAssociation{a.nodeID, a.addr, a.recovery, a.since, a.lost})
	}
	for node, k := range s.kept {
		sk := savedKept{Recovery: k.recovery}
		for _, r := range k.reports {
			sk.Sessions = append(sk.Sessions, savedUsage{r.cpSEID, r.usage})
		}
		v.Kept[node] = sk
	}
	for k, c := range s.cache.all() {
		v.Responses = append(v.Responses, savedResponse{k.from(), k.seq, c.req, s.cache.bytes(c.at), time.Unix(0, c.expires)})
	}
	for seq, p := range s.pending {
		if p.typ == sessionReportRequest {
			r := savedRequest{To: p.to, Seq: seq, B: p.b, Sent: p.sent}
			if u, ok := s.usageSent[seq]; ok {
				r.Usage = &u
			}
			v.Reports = append(v.Reports, r)
		}
	}
	// In a stable order, so that the same state saves the same.
	slices.SortFunc(v.Associations, func(a, b savedAssociation) int { return cmp.Compare(a.NodeID, b.NodeID) })
	slices.SortFunc(v.Responses, func(a, b savedResponse) int {
		return cmp.Or(a.From.Compare(b.From), cmp.Compare(a.Seq, b.Seq))
	})
	slices.SortFunc(v.Reports, func(a, b savedRequest) int { return cmp.Compare(a.Seq, b.Seq) })
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("pfcp: save: %w", err)
	}
	if err := s.store.Save(enc); err != nil {
		return fmt.Errorf("pfcp: save sessions: %w", err)
	}
	if err := s.rules.Save(enc); err != nil {
		return fmt.Errorf("pfcp: save rules: %w", err)
	}
	if err := s.meters.Save(enc); err != nil {
		return fmt.Errorf("pfcp: save meters: %w", err)
	}
	return nil
}

var sessionReportRequest = message.NewSessionReportRequest(0, 0, 0, 0, 0).MessageTypeName()

// Restore reads what Save wrote, before Serve, into a server that has
// nothing yet. Heartbeats start over; reports unanswered are sent again
// by the first retransmission tick.
func (s *Server) Restore(dec *json.Decoder) error {
	var v savedServer
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("pfcp: restore: %w", err)
	}
	now := s.now()
	s.cfg.Recovery, s.seq = v.Recovery, v.Seq
	s.api.draining.Store(v.Draining)
	for _, a := range v.Associations {
		s.assocs[a.NodeID] = &association{nodeID: a.NodeID, addr: a.Addr, recovery: a.Recovery, since: a.Since, lost: a.Lost, nextHeartbeat: now}
	}
	for node, k := range v.Kept {
		ku := keptUsage{recovery: k.Recovery}
		for _, r := range k.Sessions {
			ku.reports = append(ku.reports, sessionUsage{r.CPSEID, r.Usage})
		}
		s.kept[node] = ku
	}
	slices.SortStableFunc(v.Responses, func(a, b savedResponse) int { return a.Expires.Compare(b.Expires) })
	for _, r := range v.Responses {
		s.cache.put(keyOf(r.From, r.Seq), r.Request, r.B, r.Expires)
	}
	for _, r := range v.Reports {
		s.restoreReport(r, now)
	}
	if err := s.store.Restore(dec); err != nil {
		return fmt.Errorf("pfcp: restore sessions: %w", err)
	}
	if err := s.rules.Restore(dec, s.store.Get); err != nil {
		return fmt.Errorf("pfcp: restore rules: %w", err)
	}
	if err := s.meters.Restore(dec); err != nil {
		return fmt.Errorf("pfcp: restore meters: %w", err)
	}
	s.log.Info("pfcp: state restored", "sessions", s.store.Len(), "associations", len(s.assocs), "recovery", s.cfg.Recovery)
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
