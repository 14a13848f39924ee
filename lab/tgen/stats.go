package tgen

import (
	"errors"
	"fmt"
	"time"

	"github.com/cilium/ebpf"
)

// Reason is why the sink refused a stamped frame (enum sink_bad).
type Reason uint8

const (
	BadLength   Reason = iota // a length field disagrees with the frame
	BadChecksum               // IPv4 header checksum wrong
	BadEncap                  // G-PDU where a plain packet was expected, or the reverse
	BadTEID                   // not the flow's session's TEID
	BadPSC                    // no PDU Session Container, or the wrong PDU type
	BadQFI                    // not the flow's session's QFI
	BadInner                  // inner addresses, ports or protocol not the flow's
	BadFlow                   // flow id beyond the table
	numReasons
)

var reasonNames = [numReasons]string{"length", "checksum", "encapsulation", "TEID", "PDU session container", "QFI", "inner header", "flow"}

func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason %d", uint8(r))
}

// Stats is what the sink has seen.
type Stats struct {
	Packets uint64 // valid frames, duplicates included
	Bytes   uint64 // their inner IP bytes
	Passed  uint64 // frames without a stamp, passed to the stack
	Invalid map[Reason]uint64

	// Sums over the flows.
	Unique, Duplicates, Reordered, Late, Lost uint64

	Flows   []FlowStats // by flow id
	Latency Latency
}

// FlowStats is one flow's account.
//
// A duplicate is a sequence already seen in the window of the last 256; a
// reordered frame arrives below the highest sequence seen and was not seen
// before. A frame more than 256 below the highest is late: it counts as
// reordered and unique, as it cannot be told from a duplicate.
type FlowStats struct {
	Packets, Bytes uint64 // valid frames, duplicates included
	Unique         uint64
	Duplicates     uint64
	Reordered      uint64
	Late           uint64
	Expected       uint64 // the generator's count, or else the highest sequence seen + 1
	Lost           uint64 // Expected - Unique
}

// Latency is the one-way delay of valid frames, from the generator's stamp
// to the sink, on the same clock (bpf_ktime_get_ns). Percentiles are the
// middle of their histogram bucket, within ~3% (the buckets are 1/16 of an
// octave).
//
// The generator's frames leave in batches of 64, together, once the batch
// is built. At a set rate each frame is stamped as it is built and the
// sink takes the latency of each. Flat out, every frame of a batch has the
// time the batch began (a clock read costs as much as building a frame),
// and the sink takes the latency of the first it sees of each batch only:
// Count is then about a 64th of the frames, and the delay includes the
// batch's building time, a few microseconds.
type Latency struct {
	Count                uint64        // frames whose latency was taken
	Min                  time.Duration // as the percentiles: its bucket's middle
	Mean, P50, P99, P999 time.Duration
	Max                  time.Duration
}

// Stats reads the sink. sent, if not nil, is the generator's count per
// flow (Generator.Sent): loss is counted against it. Without it a flow is
// expected to have sent up to the highest sequence seen, so that loss
// after the last frame that arrived goes unseen.
func (s *Sink) Stats(sent []uint64) (Stats, error) {
	flows, err := s.flows()
	if err != nil {
		return Stats{}, err
	}
	var totals []sinkSinkTotals
	var hists []sinkSinkHist
	if err := errors.Join(s.objs.Totals.Lookup(uint32(0), &totals), s.objs.Latency.Lookup(uint32(0), &hists)); err != nil {
		return Stats{}, fmt.Errorf("tgen: sink stats: %w", err)
	}
	st := Stats{Invalid: map[Reason]uint64{}, Flows: make([]FlowStats, len(flows))}
	var latCount, latSum, latMax uint64
	var hist [len(sinkSinkHist{}.Bucket)]uint64
	for i, t := range totals {
		st.Packets += t.Pkts
		st.Bytes += t.Bytes
		st.Passed += t.Passed
		for r, n := range t.Bad {
			if n > 0 {
				st.Invalid[Reason(r)] += n
			}
		}
		latCount += t.LatCount
		latSum += t.LatSum
		latMax = max(latMax, t.LatMax)
		for b, n := range hists[i].Bucket {
			hist[b] += n
		}
	}
	for i, f := range flows {
		fs := FlowStats{Packets: f.Pkts, Bytes: f.Bytes, Unique: f.Unique, Duplicates: f.Dups,
			Reordered: f.Reordered, Late: f.Late, Expected: f.Next}
		if sent != nil {
			fs.Expected = sent[i]
		}
		fs.Lost = fs.Expected - min(fs.Unique, fs.Expected)
		st.Flows[i] = fs
		st.Unique += fs.Unique
		st.Duplicates += fs.Duplicates
		st.Reordered += fs.Reordered
		st.Late += fs.Late
		st.Lost += fs.Lost
	}
	st.Latency = latency(hist[:], latCount, latSum, latMax)
	return st, nil
}

// Received is the valid frames the sink has counted, duplicates included:
// Stats' Packets, read without the flows, so cheaply enough to poll.
func (s *Sink) Received() (uint64, error) {
	var totals []sinkSinkTotals
	if err := s.objs.Totals.Lookup(uint32(0), &totals); err != nil {
		return 0, fmt.Errorf("tgen: sink totals: %w", err)
	}
	var n uint64
	for _, t := range totals {
		n += t.Pkts
	}
	return n, nil
}

func (s *Sink) flows() ([]sinkSinkFlow, error) {
	n := s.spec.FlowCount()
	keys, vals := make([]uint32, n), make([]sinkSinkFlow, n)
	var cursor ebpf.MapBatchCursor
	_, err := s.objs.Flows.BatchLookup(&cursor, keys, vals, &ebpf.BatchOptions{ElemFlags: 0})
	if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return nil, fmt.Errorf("tgen: sink flows: %w", err)
	}
	return vals, nil
}

// Histogram geometry, as struct sink_hist: 16 buckets a power of two.
const histSub = 4

// bucketRange is the values [lo, lo+width) that bucket b holds.
func bucketRange(b int) (lo, width uint64) {
	if b < 1<<histSub {
		return uint64(b), 1
	}
	e := b>>histSub + histSub - 1
	m := uint64(b & (1<<histSub - 1))
	width = 1 << (e - histSub)
	return (1<<histSub + m) * width, width
}

func latency(hist []uint64, count, sum, maxNS uint64) Latency {
	l := Latency{Count: count, Max: time.Duration(maxNS)}
	if count == 0 {
		return l
	}
	l.Mean = time.Duration(sum / count)
	at := func(q float64) time.Duration {
		rank := uint64(q*float64(count-1)) + 1
		var seen uint64
		for b, n := range hist {
			if seen += n; seen >= rank {
				lo, w := bucketRange(b)
				return time.Duration(min(lo+w/2, maxNS))
			}
		}
		return l.Max
	}
	l.Min, l.P50, l.P99, l.P999 = at(0), at(0.5), at(0.99), at(0.999)
	return l
}
