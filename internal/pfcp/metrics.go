package pfcp

import (
	"context"
	"fmt"
)

// What metrics read of the server: the counts the serve loop holds, and
// the names of message types, causes and report types as TS 29.244
// writes them, for label values.

// Gauges are what the server holds at one moment.
type Gauges struct {
	Sessions int // PFCP sessions installed
	// Associations by state: up, or lost (a heartbeat went unanswered;
	// the peer's sessions are kept for the grace period).
	AssociationsUp, AssociationsLost int
	// BufferedPackets are downlink frames held for sessions whose FAR
	// buffers. BufferOverflowed counts frames refused over a bound,
	// BufferDiscarded frames dropped with their buffer (DROBU, deletion).
	BufferedPackets                   int
	BufferOverflowed, BufferDiscarded uint64
	// Journal is what the state journal did; nil when none is kept
	// (upfd not pinned).
	Journal *JournalStats
}

// Gauges reads them in the serve loop, between requests: it waits for
// the request in hand to be answered, for ctx, or for Serve to end
// (ErrStopped). Its cost does not grow with the sessions.
func (s *Server) Gauges(ctx context.Context) (Gauges, error) {
	var g Gauges
	err := s.Do(ctx, func() { g = s.gauges() })
	return g, err
}

// gauges runs in the serve loop.
func (s *Server) gauges() Gauges {
	g := Gauges{
		Sessions:         s.store.Len(),
		BufferedPackets:  s.buffers.Held(),
		BufferOverflowed: s.buffers.Overflowed,
		BufferDiscarded:  s.buffers.Discarded,
	}
	if s.keeper != nil {
		st := s.journalStats()
		g.Journal = &st
	}
	for _, a := range s.assocs {
		if a.lost.IsZero() {
			g.AssociationsUp++
		} else {
			g.AssociationsLost++
		}
	}
	return g
}

// messageTypes names the message types of TS 29.244 Table 7.3-1.
var messageTypes = map[uint8]string{
	1: "Heartbeat Request", 2: "Heartbeat Response",
	3: "PFD Management Request", 4: "PFD Management Response",
	5: "Association Setup Request", 6: "Association Setup Response",
	7: "Association Update Request", 8: "Association Update Response",
	9: "Association Release Request", 10: "Association Release Response",
	11: "Version Not Supported Response",
	12: "Node Report Request", 13: "Node Report Response",
	14: "Session Set Deletion Request", 15: "Session Set Deletion Response",
	16: "Session Set Modification Request", 17: "Session Set Modification Response",
	50: "Session Establishment Request", 51: "Session Establishment Response",
	52: "Session Modification Request", 53: "Session Modification Response",
	54: "Session Deletion Request", 55: "Session Deletion Response",
	56: "Session Report Request", 57: "Session Report Response",
}

// MessageTypeName is a message type's name in TS 29.244 Table 7.3-1,
// "Session Establishment Request"; ok is false for a type it does not
// define.
func MessageTypeName(typ uint8) (name string, ok bool) {
	name, ok = messageTypes[typ]
	if !ok {
		name = fmt.Sprintf("message type %d", typ)
	}
	return name, ok
}

// causes names the cause values of TS 29.244 Table 8.2.1-1.
var causes = map[uint8]string{
	1:  "Request accepted (success)",
	2:  "More Usage Report to send",
	3:  "Request partially accepted",
	64: "Request rejected (reason not specified)",
	65: "Session context not found",
	66: "Mandatory IE missing",
	67: "Conditional IE missing",
	68: "Invalid length",
	69: "Mandatory IE incorrect",
	70: "Invalid Forwarding Policy",
	71: "Invalid F-TEID allocation option",
	72: "No established PFCP Association",
	73: "Rule creation/modification Failure",
	74: "PFCP entity in congestion",
	75: "No resources available",
	76: "Service not supported",
	77: "System failure",
	78: "Redirection Requested",
	79: "All dynamic addresses are occupied",
	80: "Unknown Pre-defined Rule",
	81: "Unknown Application ID",
	82: "L2TP tunnel Establishment failure",
	83: "L2TP session Establishment failure",
	84: "L2TP tunnel release",
	85: "L2TP session release",
}

// CauseName is a cause value's name in TS 29.244 Table 8.2.1-1, "Session
// context not found"; a value it does not name reads "cause 99".
func CauseName(cause uint8) string {
	if n, ok := causes[cause]; ok {
		return n
	}
	return fmt.Sprintf("cause %d", cause)
}

// reportTypes are the flags of the Report Type IE (§8.2.21), by bit.
var reportTypes = [8]string{"DLDR", "USAR", "ERIR", "UPIR", "TMIR", "SESR", "UISR", "bit 8"}

// ReportTypeName is the name of a Report Type flag (ReportDLDR, …) as
// §8.2.21 writes it: "DLDR".
func ReportTypeName(bit int) string {
	if bit < 0 || bit >= len(reportTypes) {
		return fmt.Sprintf("bit %d", bit+1)
	}
	return reportTypes[bit]
}

// ReportTypeBits is how many Report Type flags Stats counts.
const ReportTypeBits = len(reportTypes)
