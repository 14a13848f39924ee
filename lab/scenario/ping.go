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
	// Mode is who pings: PingProbe, the lab's probe in the gNB's
	// namespace, or PingUE, the system's ping from a real UE (lab/gnb).
	Mode string
}

// Ping modes.
const (
	PingProbe = "probe" // the lab's probe writes the G-PDUs (lab/probe)
	PingUE    = "ue"    // the kernel's ICMP from a UE namespace, ping's own summary
)

func defaultPing() Settings {
	return &Ping{Sizes: []int{64, 1400}, Count: 100, Interval: 10 * time.Millisecond, Mode: PingProbe}
}

func (p *Ping) fields(d *decoder) []field {
	return []field{
		{"sizes", values(d, &p.Sizes, "64, 1400", parsePingPayload)},
		{"count", value(d, &p.Count, "a number such as 100", parseCount(countRange{1, 1_000_000}))},
		{"interval", value(d, &p.Interval, "a duration such as 10ms, or 0", parseInterval)},
		{"mode", value(d, &p.Mode, "probe or ue", oneOf("a ping mode", PingProbe, PingUE))},
	}
}

func (p *Ping) validate(v *validator, path string, s *Scenario) {
	v.distinct(yamlfile.KeyPath(path, "sizes"), p.Sizes)
	if p.Mode == PingUE {
		v.realUEs(path, "", nil, s)
	}
}

func (p *Ping) setup() string {
	by := ""
	if p.Mode == PingUE {
		by = ", the system's ping from a UE"
	}
	return fmt.Sprintf("%s, %d each, %s apart%s", bytesText(sizesText(p.Sizes)), p.Count, p.Interval, by)
}

func (p *Ping) derivedName() string {
	if p.Mode == PingUE {
		return "ping from a UE " + bytesText(sizesText(p.Sizes))
	}
	return "ping " + bytesText(sizesText(p.Sizes))
}

func (p *Ping) estimate() time.Duration { return times(len(p.Sizes)*p.Count, p.Interval) }

// needs: a probe needs a UPF that decapsulates, which the reference
// forwarder is not.
func (*Ping) needs() Needs { return Needs{} }
