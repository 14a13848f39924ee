package probe

import (
	"fmt"
	"io"
	"math"
	"time"
)

// PingResult is what a Ping measured: each payload size on its own, in
// the order asked, and all of them together.
type PingResult struct {
	Sizes []PingStats
	Total PingStats // Size -1
}

// PingStats sum up a run of echo requests.
type PingStats struct {
	Size           int // ICMP payload bytes
	Sent, Received int
	Loss           float64       // per cent of the requests sent that got no reply
	Time           time.Duration // from the first request to the last reply, or to the end of the wait
	Min, Avg, Max  time.Duration // round-trip times
	Mdev           time.Duration // their deviation as Linux ping gives it: sqrt(mean(rtt²) - mean(rtt)²)
	RTTs           []time.Duration
}

func stats(size, sent int, elapsed time.Duration, rtts []time.Duration) PingStats {
	s := PingStats{Size: size, Sent: sent, Received: len(rtts), Time: elapsed, RTTs: rtts}
	if sent > 0 {
		s.Loss = 100 * float64(sent-len(rtts)) / float64(sent)
	}
	if len(rtts) == 0 {
		return s
	}
	s.Min, s.Max = rtts[0], rtts[0]
	var sum, squares float64
	for _, r := range rtts {
		s.Min, s.Max = min(s.Min, r), max(s.Max, r)
		sum += float64(r)
		squares += float64(r) * float64(r)
	}
	mean := sum / float64(len(rtts))
	s.Avg = time.Duration(math.Round(mean))
	s.Mdev = time.Duration(math.Round(math.Sqrt(max(0, squares/float64(len(rtts))-mean*mean))))
	return s
}

// total sums up several runs as one.
func total(runs []PingStats) PingStats {
	var sent int
	var elapsed time.Duration
	var rtts []time.Duration
	for _, r := range runs {
		sent += r.Sent
		elapsed += r.Time
		rtts = append(rtts, r.RTTs...)
	}
	return stats(-1, sent, elapsed, rtts)
}

// Write prints the statistics in the form of Ouroboros' oping, a block
// for each size and one for all of them when there are several:
//
//	--- 198.18.7.10 (56 bytes) ping statistics ---
//	5 SDUs transmitted, 5 received, 0% packet loss, time: 401.234 ms
//	rtt min/avg/max/mdev = 0.041/0.052/0.077/0.013 ms
func (r PingResult) Write(w io.Writer, target string) error {
	blocks := r.Sizes
	if len(r.Sizes) > 1 {
		blocks = append(blocks[:len(blocks):len(blocks)], r.Total)
	}
	for _, s := range blocks {
		what := fmt.Sprintf("%d bytes", s.Size)
		if s.Size < 0 {
			what = "all sizes"
		}
		if _, err := fmt.Fprintf(w, "\n--- %s (%s) ping statistics ---\n%s", target, what, s.summary()); err != nil {
			return err
		}
	}
	return nil
}

// summary is oping's two lines; the loss is rounded up, as oping does, so
// that a loss is never shown as 0%, and there is no rtt line without a reply.
func (s PingStats) summary() string {
	loss := 0
	if s.Sent > 0 {
		loss = (100*(s.Sent-s.Received) + s.Sent - 1) / s.Sent
	}
	out := fmt.Sprintf("%d SDUs transmitted, %d received, %d%% packet loss, time: %.3f ms\n", s.Sent, s.Received, loss, ms(s.Time))
	if s.Received > 0 {
		out += fmt.Sprintf("rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms\n", ms(s.Min), ms(s.Avg), ms(s.Max), ms(s.Mdev))
	}
	return out
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
