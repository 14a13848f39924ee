package pfcp

import (
	"encoding/binary"
	"strings"
	"sync/atomic"

	"github.com/wmnsk/go-pfcp/message"
)

// Stats counts PFCP messages as they cross the socket, by message type and
// by the cause of responses and the report type of Session Report
// Requests. The reader and writer goroutines count; anyone may read.
type Stats struct {
	rx, tx  [256]atomic.Uint64      // by message type
	causes  [256][256]atomic.Uint64 // responses sent, by message type and cause
	reports [8]atomic.Uint64        // Session Report Requests sent, by Report Type bit
}

// IE types looked up in counted messages (§8.1.2).
const (
	ieCause      = 19
	ieReportType = 39
)

// Report types, the bits of the Report Type IE (§8.2.21), as counted.
const (
	ReportDLDR = iota // downlink data
	ReportUSAR        // usage
	ReportERIR        // error indication
	ReportUPIR        // user plane inactivity
)

// responseTypes are the response message types of Table 7.3-1, by the
// names messageTypes gives them.
var responseTypes = func() (r [256]bool) {
	for typ, name := range messageTypes {
		r[typ] = strings.HasSuffix(name, " Response")
	}
	return r
}()

func (t *Stats) received(b []byte) {
	if len(b) >= 2 {
		t.rx[b[1]].Add(1)
	}
}

func (t *Stats) sent(b []byte) {
	if len(b) < 2 {
		return
	}
	typ := b[1]
	t.tx[typ].Add(1)
	if responseTypes[typ] {
		if c, ok := topIE(b, ieCause); ok && len(c) == 1 {
			t.causes[typ][c[0]].Add(1)
		}
	}
	if typ == message.MsgTypeSessionReportRequest { // Session Report Request
		if r, ok := topIE(b, ieReportType); ok && len(r) >= 1 {
			for bit := range 8 {
				if r[0]&(1<<bit) != 0 {
					t.reports[bit].Add(1)
				}
			}
		}
	}
}

// topIE is the value of the first top-level IE of type typ in message b.
func topIE(b []byte, typ uint16) ([]byte, bool) {
	off := 8 // flags, type, length, sequence number, spare
	if b[0]&1 != 0 {
		off = 16 // with an SEID
	}
	for off+4 <= len(b) {
		t := binary.BigEndian.Uint16(b[off:])
		n := int(binary.BigEndian.Uint16(b[off+2:]))
		if off+4+n > len(b) {
			return nil, false
		}
		if t == typ {
			return b[off+4 : off+4+n], true
		}
		off += 4 + n
	}
	return nil, false
}

// Received is how many messages of type typ came in (decodable or not).
func (t *Stats) Received(typ uint8) uint64 { return t.rx[typ].Load() }

// Sent is how many messages of type typ went out, retransmissions included.
func (t *Stats) Sent(typ uint8) uint64 { return t.tx[typ].Load() }

// Responses is how many responses of type typ went out with cause.
func (t *Stats) Responses(typ, cause uint8) uint64 { return t.causes[typ][cause].Load() }

// Reports is how many Session Report Requests went out with the report
// type bit (ReportDLDR, ReportUSAR, …) set.
func (t *Stats) Reports(bit int) uint64 { return t.reports[bit].Load() }

// Stats are the server's message counters.
func (s *Server) Stats() *Stats { return &s.stats }
