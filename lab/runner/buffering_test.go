package runner

import "testing"

// A flush is tallied against the bound, and a frame sent after the
// Modification Response that overtakes a buffered one puts it out of order.
func TestTallyFlush(t *testing.T) {
	const buffered, after = 1, 2
	f := func(burst uint32, seq uint64) arrival { return arrival{burst: burst, seq: seq} }
	for _, tc := range []struct {
		name   string
		got    []arrival
		within int
		want   flushTally
	}{
		{"in order", []arrival{f(buffered, 0), f(buffered, 1), f(after, 0)}, 2, flushTally{buffered: 2, after: 1}},
		{"overflowed, the bound kept", []arrival{f(buffered, 0), f(buffered, 1), f(after, 0)}, 2, flushTally{buffered: 2, after: 1}},
		{"one lost within the bound", []arrival{f(buffered, 0), f(after, 0)}, 2, flushTally{buffered: 1, after: 1, lostWithin: 1}},
		{"overtaken", []arrival{f(buffered, 0), f(after, 0), f(buffered, 1)}, 2, flushTally{buffered: 2, after: 1, reordered: 1}},
		{"out of sequence, a duplicate", []arrival{f(buffered, 1), f(buffered, 0), f(buffered, 1)}, 2, flushTally{buffered: 2, reordered: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tallyFlush(tc.got, buffered, tc.within); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
