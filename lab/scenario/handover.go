package scenario

import (
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindHandover checks a path switch with End Markers under traffic.
const KindHandover = "handover"

// Handover hands sessions of its own over, one at a time, while the run's
// sessions carry Rate each way: the DN host sends the session's UE a
// numbered datagram every Interval, Before on the gNB's first address,
// then the SMF switches the downlink to its second with SNDEM (an Update
// FAR asking for End Markers on the old tunnel), and sending goes on for
// After. Nothing may be lost, duplicated or reordered, and each old path
// must end with one End Marker after its last frame.
type Handover struct {
	Handovers     int
	Rate          Rate // each way, through the run's sessions
	Interval      time.Duration
	Before, After time.Duration
}

func defaultHandover() Settings {
	return &Handover{Handovers: 10, Rate: Rate{PPS: 20_000}, Interval: 200 * time.Microsecond,
		Before: 300 * time.Millisecond, After: 300 * time.Millisecond}
}

func (h *Handover) fields(d *decoder) []field {
	return []field{
		{"handovers", value(d, &h.Handovers, "a number such as 10", parseCount(countRange{1, 1000}))},
		{"rate", value(d, &h.Rate, "a rate such as 20kpps", parsePacketRate)},
		{"interval", value(d, &h.Interval, "a duration such as 200us", parseDuration)},
		{"before", value(d, &h.Before, "a duration such as 300ms", parseDuration)},
		{"after", value(d, &h.After, "a duration such as 300ms", parseDuration)},
	}
}

func (h *Handover) validate(v *validator, path string, s *Scenario) {
	v.withPFCP(path, s)
	for _, w := range []struct {
		key string
		d   time.Duration
	}{{"before", h.Before}, {"after", h.After}} {
		if w.d < 10*h.Interval {
			v.add(yamlfile.KeyPath(path, w.key), "%s is less than 10 datagrams at interval %s; give each path some frames to lose", w.d, h.Interval)
		}
	}
}

func (h *Handover) setup() string {
	return fmt.Sprintf("%d path switches with SNDEM, a datagram every %s for %s before and %s after, beside %s each way",
		h.Handovers, h.Interval, h.Before, h.After, h.Rate)
}

func (h *Handover) derivedName() string { return "handover" }

func (h *Handover) estimate() time.Duration {
	return time.Second + times(h.Handovers, h.Before+h.After+100*time.Millisecond)
}

// needs: the run's sessions carry traffic meanwhile, 1000 as the rule
// latency check's.
func (*Handover) needs() Needs { return Needs{Sessions: 1000} }
