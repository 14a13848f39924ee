package smf

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"none", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7 * time.Millisecond},
		{"median of four is the second (nearest rank)", ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"p99 of a hundred is the 99th", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"p50 of a hundred is the 50th", ms(hundred...), 0.50, 50 * time.Millisecond},
	} {
		if got := percentile(tc.sorted, tc.q); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRecorder: a phase counts what was accepted, refused by cause and
// unanswered, and its error wraps the first failure.
func TestRecorder(t *testing.T) {
	r := newRecorder("establish")
	t0 := time.Now()
	refusal := &CauseError{Request: "Session Establishment Request", CPSEID: 2, Cause: 73, Offending: 93}
	timeout := fmt.Errorf("session 0x3: %w", ErrTimeout)
	for i, err := range []error{nil, refusal, timeout, nil} {
		r.sent(t0)
		r.ended(t0, t0.Add(time.Duration(i+1)*time.Millisecond), err)
	}
	p, err := r.result()
	if p.Sent != 4 || p.Accepted != 2 || p.Failed != 2 || p.Refused[73] != 1 || p.Unanswered != 1 {
		t.Errorf("phase %+v", p)
	}
	if p.Elapsed != 4*time.Millisecond || p.P50 != time.Millisecond || p.P99 != 4*time.Millisecond || p.Rate() != 500 {
		t.Errorf("elapsed %v, p50 %v, p99 %v, rate %v", p.Elapsed, p.P50, p.P99, p.Rate())
	}
	var got *CauseError
	if !errors.As(err, &got) || got != refusal {
		t.Errorf("error %v does not wrap the first failure", err)
	}
	want := "establish: 2/4 accepted in 4ms, 500/s, p50 1ms, p99 4ms, 1 × cause 73 (Rule creation/modification Failure), 1 unanswered"
	if p.String() != want {
		t.Errorf("phase reads\n%q, want\n%q", p.String(), want)
	}
}

func TestCauseError(t *testing.T) {
	for _, tc := range []struct {
		err  CauseError
		want string
	}{
		{CauseError{Request: "Session Establishment Request", CPSEID: 0x2a, UE: netip.MustParseAddr("10.45.0.42"), Cause: 73, Offending: 93},
			"session 0x2a (UE 10.45.0.42): Session Establishment Request: cause 73 (Rule creation/modification Failure), offending IE 93"},
		{CauseError{Request: "Session Deletion Request", CPSEID: 7, Cause: 65},
			"session 0x7: Session Deletion Request: cause 65 (Session context not found)"},
		{CauseError{Request: "Association Setup Request", Cause: 200},
			"Association Setup Request: cause 200 (unknown cause)"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got\n%q, want\n%q", got, tc.want)
		}
	}
}

// TestSlots: the lowest free slot first, none beyond the limit, a freed
// one taken again.
func TestSlots(t *testing.T) {
	s := slots{limit: 3}
	for want := range 3 {
		if got, ok := s.take(); !ok || got != want {
			t.Fatalf("take: %d %v, want %d", got, ok, want)
		}
	}
	if _, ok := s.take(); ok {
		t.Fatal("a slot beyond the limit")
	}
	s.release(1)
	s.release(0)
	for _, want := range []int{0, 1} {
		if got, ok := s.take(); !ok || got != want {
			t.Errorf("after release: %d %v, want %d", got, ok, want)
		}
	}
}

// TestCapacity: the sessions a client has room for are what its pools
// number, the IPv6 one only for the profile that gives IPv6 prefixes; the
// lab's pools hold a million sessions.
func TestCapacity(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want int
	}{
		{"the lab's pools", Config{}, 1<<20 - 2},
		{"a /16", Config{UEPool: netip.MustParsePrefix("10.45.0.0/16")}, 65534},
		{"a /48 of IPv6 without IPv6 sessions", Config{UEPoolV6: netip.MustParsePrefix("2001:db8:45::/48")}, 1<<20 - 2},
		{"a /48 of IPv6 with open5gs's IPv4v6 sessions", Config{Profile: Open5GS, UEPoolV6: netip.MustParsePrefix("2001:db8:45::/48")}, 65536},
		{"a /8, within 2^24", Config{UEPool: netip.MustParsePrefix("10.0.0.0/8")}, 1<<24 - 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Capacity(tc.cfg); got != tc.want {
				t.Errorf("room for %d sessions, want %d", got, tc.want)
			}
		})
	}
}
