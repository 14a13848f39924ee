package pfcp

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/wmnsk/go-pfcp/message"
)

// pending is a request of ours waiting for its response. It is sent again
// every T1 until its last send went unanswered (§6.4: T1 and N1 are the
// node's).
type pending struct {
	to   netip.AddrPort
	b    []byte
	sent int
	// limit is the sends before giving up: N1 unless the request says.
	limit int
	next  time.Time
	typ   string
	// answered gets the response; expired is called after the last
	// unanswered retransmission. Either may be nil.
	answered func(message.Message)
	expired  func()
}

// request sends one of our requests and keeps it for retransmission.
// The sequence number is ours: requests and responses number apart.
func (s *Server) request(to netip.AddrPort, build func(seq uint32) message.Message,
	answered func(message.Message), expired func()) {
	s.requestN(to, s.cfg.N1, build, answered, expired)
}

// requestN is request with its own number of sends.
func (s *Server) requestN(to netip.AddrPort, sends int, build func(seq uint32) message.Message,
	answered func(message.Message), expired func()) {
	s.seq = s.seq%0xffffff + 1 // 24 bits (§7.2.2.2)
	m := build(s.seq)
	b := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(b); err != nil {
		s.log.Error("pfcp: encode", "type", m.MessageTypeName(), "err", err)
		return
	}
	s.pending[s.seq] = &pending{to: to, b: b, sent: 1, limit: sends, next: s.now().Add(s.cfg.T1), typ: m.MessageTypeName(),
		answered: answered, expired: expired}
	s.keptPending(s.seq, s.pending[s.seq])
	s.write(to, b)
}

// answer matches a response to our request: same sequence number, from
// the node we sent it to.
func (s *Server) answer(from netip.AddrPort, m message.Message) {
	seq := m.Sequence()
	p, ok := s.pending[seq]
	if !ok || p.to.Addr().Unmap() != from.Addr().Unmap() {
		s.log.Debug("pfcp: response to no request of ours", "from", from, "type", m.MessageTypeName(), "seq", seq)
		return
	}
	delete(s.pending, seq)
	s.keptPending(seq, p)
	if p.answered != nil {
		p.answered(m)
	}
}

// retransmit sends again what is due, and gives up after the last send.
func (s *Server) retransmit(now time.Time) {
	for seq, p := range s.pending {
		if now.Before(p.next) {
			continue
		}
		if p.sent >= p.limit {
			delete(s.pending, seq)
			s.keptPending(seq, p)
			s.quiet.note(slog.LevelInfo, "pfcp: request unanswered", "to", p.to, "type", p.typ, "sends", p.sent)
			if p.expired != nil {
				p.expired()
			}
			continue
		}
		p.sent++
		p.next = now.Add(s.cfg.T1)
		s.write(p.to, p.b)
	}
}

// keptPending marks a change to a request of ours that the state keeps:
// a Session Report Request, whose usage must not be lost (state.go).
func (s *Server) keptPending(seq uint32, p *pending) {
	if p.typ == sessionReportRequest {
		s.keeper.report(seq)
	}
}
