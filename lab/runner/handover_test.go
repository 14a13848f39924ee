package runner

import (
	"net/netip"
	"testing"
)

// The handover tally counts each fault where it is: a frame lost, one
// twice, one late, an old path without its End Marker or with a frame
// after it.
func TestHandoverTally(t *testing.T) {
	oldGNB, newGNB := netip.MustParseAddr("198.18.3.1"), netip.MustParseAddr("198.18.3.11")
	frame := func(to netip.Addr, seq uint64) arrival { return arrival{to: to, seq: seq} }
	end := arrival{to: oldGNB, endMarker: true}
	for _, tc := range []struct {
		name string
		sent uint64
		got  []arrival
		want handoverTally
	}{
		{"clean", 4, []arrival{frame(oldGNB, 0), frame(oldGNB, 1), end, frame(newGNB, 2), frame(newGNB, 3)},
			handoverTally{handovers: 1, sent: 4, oldPath: 2, newPath: 2, endMarkers: 1}},
		{"the new path first", 4, []arrival{frame(oldGNB, 0), frame(newGNB, 2), frame(oldGNB, 1), end, frame(newGNB, 3)},
			handoverTally{handovers: 1, sent: 4, oldPath: 2, newPath: 2, endMarkers: 1, reordered: 1}},
		{"a frame after the End Marker, one lost, one twice", 5, []arrival{frame(oldGNB, 0), end, frame(oldGNB, 1), frame(newGNB, 3), frame(newGNB, 3)},
			handoverTally{handovers: 1, sent: 5, oldPath: 2, newPath: 1, endMarkers: 1, afterEndMarker: 1, lost: 2, duplicated: 1}},
		{"no End Marker", 2, []arrival{frame(oldGNB, 0), frame(newGNB, 1)},
			handoverTally{handovers: 1, sent: 2, oldPath: 1, newPath: 1, withoutEndMarker: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got handoverTally
			got.add(tc.sent, oldGNB, tc.got)
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
