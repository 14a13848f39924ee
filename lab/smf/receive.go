package smf

import (
	"bytes"
	"net/netip"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"
)

// receive reads every datagram until Close: answers end their
// transactions, the UPF's requests are answered at once.
func (c *Client) receive() {
	defer c.wg.Done()
	buf := make([]byte, 65535)
	for {
		n, from, err := c.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return // closed; whatever else stops reading shows as timeouts
		}
		at := time.Now()
		m, err := message.Parse(bytes.Clone(buf[:n])) // the message keeps slices of what it parsed
		if err != nil {
			c.bump(&c.counters.Undecodable)
			continue
		}
		if c.answerRequest(m, from) {
			if r, ok := m.(*message.SessionReportRequest); ok {
				c.noteReport(r, at)
			}
			continue
		}
		tx := c.pending.takeAnswered(m)
		if tx == nil {
			c.bump(&c.counters.Stray)
			continue
		}
		tx.done <- ending{tx: tx, msg: m, at: at}
	}
}

// answerRequest accepts what the UPF asks of us; false if m is not a
// request we take.
func (c *Client) answerRequest(m message.Message, from netip.AddrPort) bool {
	var resp message.Message
	switch r := m.(type) {
	case *message.HeartbeatRequest:
		// Always the association's Recovery Time Stamp: another would tell
		// the UPF that we restarted and lost our sessions.
		resp = message.NewHeartbeatResponse(r.Sequence(), ie.NewRecoveryTimeStamp(c.recovery))
		c.bump(&c.counters.Heartbeats)
	case *message.SessionReportRequest:
		resp = c.reportResponse(r)
		c.bump(&c.counters.Reports)
	case *message.NodeReportRequest:
		resp = message.NewNodeReportResponse(r.Sequence(), c.nodeID, ie.NewCause(ie.CauseRequestAccepted), nil)
		c.bump(&c.counters.NodeReports)
	default:
		return false
	}
	b := make([]byte, resp.MarshalLen())
	if resp.MarshalTo(b) == nil {
		c.conn.WriteToUDPAddrPort(b, from) // a lost answer is sent again on the UPF's retransmission
	}
	return true
}

// reportResponse accepts a Session Report Request for one of our
// sessions, addressed to the UPF's SEID for it. The request names our
// SEID; one we do not know is answered Session context not found, to SEID
// 0 (§7.2.2.4.2).
func (c *Client) reportResponse(r *message.SessionReportRequest) message.Message {
	c.mu.Lock()
	s, ok := c.sessions[r.SEID()]
	var up uint64
	if ok {
		up = s.UPSEID
	}
	c.mu.Unlock()
	cause := ie.CauseRequestAccepted
	if !ok {
		cause = ie.CauseSessionContextNotFound
	}
	return message.NewSessionReportResponse(0, 0, up, r.Sequence(), 0, ie.NewCause(cause))
}
