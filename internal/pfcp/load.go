package pfcp

import (
	"time"

	"github.com/wmnsk/go-pfcp/ie"
)

// Load and overload control (TS 29.244 §6.2.3, §6.2.4): an SMF that
// selects UPFs by load learns upfd's from the Load Control Information in
// its session responses and reports, and is asked to send fewer new
// sessions by Overload Control Information when upfd nears its limit.
// Each goes only to an SMF that said it takes it (LOAD, OVRL in its CP
// Function Features), and only when it changed since that SMF last got it.

// The load is the share of max_sessions in use, in whole percents. Above
// overloadFrom percent upfd is overloaded, and asks for a reduction of
// new sessions that grows to 100 % at the limit, valid overloadFor.
const (
	overloadFrom = 90
	overloadFor  = 10 * time.Second
)

// CP Function Features (§8.2.58), octet 5.
const (
	cpLOAD = 0x01
	cpOVRL = 0x02
)

// loadState is what upfd last said of its load, each part with its own
// sequence number (§8.2.52), which grows whenever the part changes.
type loadState struct {
	metric, reduction       uint8
	metricSeq, reductionSeq uint32
}

// peerLoad is what one SMF takes, and what it was last told.
type peerLoad struct {
	load, overload          bool
	metricSeq, reductionSeq uint32
}

// cpFeatures reads which of load and overload control an SMF takes.
func cpFeatures(f *ie.IE) peerLoad {
	if f == nil || len(f.Payload) == 0 {
		return peerLoad{}
	}
	return peerLoad{load: f.Payload[0]&cpLOAD != 0, overload: f.Payload[0]&cpOVRL != 0}
}

// measureLoad brings the load up to date with the sessions in use.
func (s *Server) measureLoad() {
	max := s.store.MaxSessions()
	if max <= 0 {
		return
	}
	metric := uint8(min(100, 100*s.store.Len()/max))
	reduction := uint8(0)
	if metric > overloadFrom {
		reduction = uint8(min(100, int(metric-overloadFrom)*100/(100-overloadFrom)))
	}
	l := &s.load
	if metric != l.metric {
		l.metric, l.metricSeq = metric, l.metricSeq+1
	}
	if reduction != l.reduction {
		l.reduction, l.reductionSeq = reduction, l.reductionSeq+1
	}
}

// loadIEsFor is loadIEs for the SMF of a node ID, none without one.
func (s *Server) loadIEsFor(node string) []*ie.IE {
	a, ok := s.assocs[node]
	if !ok {
		return nil
	}
	return s.loadIEs(a)
}

// loadIEs are the Load and Overload Control Information an SMF gets in
// the next session response or report: what changed since it last got
// them, if it takes them.
func (s *Server) loadIEs(a *association) []*ie.IE {
	s.measureLoad()
	l, p := &s.load, &a.loadTold
	var out []*ie.IE
	if p.load && p.metricSeq != l.metricSeq {
		p.metricSeq = l.metricSeq
		out = append(out, ie.NewLoadControlInformation(ie.NewSequenceNumber(l.metricSeq), ie.NewMetric(l.metric)))
	}
	if p.overload && p.reductionSeq != l.reductionSeq {
		p.reductionSeq = l.reductionSeq
		// AOCI: the overload is the node's, not a connection's.
		out = append(out, ie.NewOverloadControlInformation(ie.NewSequenceNumber(l.reductionSeq),
			ie.NewMetric(l.reduction), ie.NewTimer(overloadFor), ie.NewOCIFlags(0x01)))
	}
	return out
}
