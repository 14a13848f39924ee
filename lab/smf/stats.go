package smf

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Phase is what one run of one kind of request achieved.
type Phase struct {
	Name       string        // "establish", "activate", "switch to 198.18.3.11", "delete", ...
	Sent       int           // requests sent (retransmissions not counted)
	Accepted   int           // answered Request accepted, and the answer as it should be
	Refused    map[uint8]int // answered with another cause, by cause
	Unanswered int           // given up after N1 sends
	Failed     int           // every request that was not accepted, for any reason
	Elapsed    time.Duration // from the first request sent to the last one ended
	P50, P99   time.Duration // latency of the accepted ones, first send to answer
}

// Rate is the accepted requests per second of Elapsed.
func (p Phase) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Accepted) / p.Elapsed.Seconds()
}

// String is one line: "establish: 1000/1000 accepted in 120ms, 8333/s, p50 4.1ms, p99 9.8ms".
func (p Phase) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d/%d accepted in %v, %.0f/s, p50 %v, p99 %v", p.Name, p.Accepted, p.Sent,
		readable(p.Elapsed), p.Rate(), p.P50.Round(time.Microsecond), p.P99.Round(time.Microsecond))
	for _, c := range slices.Sorted(maps.Keys(p.Refused)) {
		fmt.Fprintf(&b, ", %d × cause %d (%s)", p.Refused[c], c, CauseName(c))
	}
	if p.Unanswered > 0 {
		fmt.Fprintf(&b, ", %d unanswered", p.Unanswered)
	}
	if other := p.Failed - p.Unanswered - sum(p.Refused); other > 0 {
		fmt.Fprintf(&b, ", %d wrong answers", other)
	}
	return b.String()
}

// readable rounds d to what is worth printing.
func readable(d time.Duration) time.Duration {
	if d < 10*time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// recorder collects the endings of one phase.
type recorder struct {
	phase     Phase
	start     time.Time
	latencies []time.Duration
	first     error // the first failure, which the phase's error wraps
}

func newRecorder(name string) *recorder {
	return &recorder{phase: Phase{Name: name, Refused: map[uint8]int{}}}
}

func (r *recorder) sent(at time.Time) {
	if r.phase.Sent == 0 {
		r.start = at
	}
	r.phase.Sent++
}

// ended records one request's end: err nil is an accepted one.
func (r *recorder) ended(sent, at time.Time, err error) {
	r.phase.Elapsed = max(r.phase.Elapsed, at.Sub(r.start))
	if err == nil {
		r.phase.Accepted++
		r.latencies = append(r.latencies, at.Sub(sent))
		return
	}
	r.phase.Failed++
	var refused *CauseError
	switch {
	case errors.As(err, &refused):
		r.phase.Refused[refused.Cause]++
	case errors.Is(err, ErrTimeout):
		r.phase.Unanswered++
	}
	if r.first == nil {
		r.first = err
	}
}

// result is the phase, and an error that counts its failures and wraps
// the first, or nil when every request was accepted.
func (r *recorder) result() (Phase, error) {
	slices.Sort(r.latencies)
	r.phase.P50 = percentile(r.latencies, 0.50)
	r.phase.P99 = percentile(r.latencies, 0.99)
	if r.first == nil {
		return r.phase, nil
	}
	return r.phase, fmt.Errorf("%s: %d of %d requests failed; the first: %w", r.phase.Name, r.phase.Failed, r.phase.Sent, r.first)
}

// percentile is the nearest-rank q-quantile of sorted durations.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func sum(m map[uint8]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
