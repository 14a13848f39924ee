package scenario

import (
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindPing is the round-trip time through the UPF, by size.
const KindPing = "ping"

// Ping measures round-trip times from a UE to the DN host, like ping and
// oping: Count echo requests of each size, Interval apart.
type Ping struct {
	Sizes    []int // ICMP payload bytes
	Count    int   // per size
	Interval time.Duration
}

func defaultPing() Settings {
	return &Ping{Sizes: []int{64, 1400}, Count: 100, Interval: 10 * time.Millisecond}
}

func (p *Ping) fields(d *decoder) []field {
	return []field{
		{"sizes", values(d, &p.Sizes, "64, 1400", parsePingPayload)},
		{"count", value(d, &p.Count, "a number such as 100", parseCount(countRange{1, 1_000_000}))},
		{"interval", value(d, &p.Interval, "a duration such as 10ms, or 0", parseInterval)},
	}
}

func (p *Ping) validate(v *validator, path string, _ *Scenario) {
	v.distinct(yamlfile.KeyPath(path, "sizes"), p.Sizes)
}

func (p *Ping) setup() string {
	return fmt.Sprintf("%s, %d each, %s apart", bytesText(sizesText(p.Sizes)), p.Count, p.Interval)
}

func (p *Ping) derivedName() string { return "ping " + bytesText(sizesText(p.Sizes)) }

func (p *Ping) estimate() time.Duration { return times(len(p.Sizes)*p.Count, p.Interval) }

// needs: a probe needs a UPF that decapsulates, which the reference
// forwarder is not.
func (*Ping) needs() Needs { return Needs{} }
