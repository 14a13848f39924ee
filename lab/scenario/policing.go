package scenario

import (
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindPolicing checks a UPF's QER MBR: the rate it lets through.
const KindPolicing = "policing"

// Policing gives a session of its own each MBR in turn and offers it
// Offered times that; the rate delivered after Warmup, over Duration, must
// be within Tolerance of the MBR, each direction. With Gate, a session
// whose gates are closed must let nothing through.
type Policing struct {
	MBR       []Rate
	Direction Direction // Both: uplink, then downlink
	Offered   float64   // times the MBR
	Tolerance float64   // percent of the MBR, either way
	// Warmup is sent before the measurement: the policer's burst is
	// spent by then, and the rate delivered is its long-run rate.
	Warmup   time.Duration
	Duration time.Duration // of the measurement
	Gate     bool
}

func defaultPolicing() Settings {
	return &Policing{MBR: []Rate{{BPS: 64e3}, {BPS: 1e6}, {BPS: 10e6}, {BPS: 100e6}, {BPS: 1e9}},
		Direction: Both, Offered: 2, Tolerance: 2, Warmup: time.Second, Duration: 3 * time.Second, Gate: true}
}

func (p *Policing) fields(d *decoder) []field {
	return []field{
		{"mbr", values(d, &p.MBR, "64kbps, 1Mbps, 1Gbps", parseMBR)},
		{"direction", value(d, &p.Direction, "uplink, downlink or both", parseDirection)},
		{"offered", value(d, &p.Offered, "a factor such as 2x", parseFactor)},
		{"tolerance", value(d, &p.Tolerance, "a percentage such as 2%", parseLimit)},
		{"warmup", value(d, &p.Warmup, "a duration such as 1s", parseDuration)},
		{"duration", value(d, &p.Duration, "a duration such as 3s", parseDuration)},
		{"gate", value(d, &p.Gate, "true or false", yamlfile.ParseBool)},
	}
}

func (p *Policing) validate(v *validator, path string, s *Scenario) { v.withPFCP(path, s) }

func (p *Policing) setup() string {
	gate := ""
	if p.Gate {
		gate = "; gate closed"
	}
	return fmt.Sprintf("MBR %s offered at %sx, %s, %s after %s each, within %s%%%s", ratesText(p.MBR),
		formatFloat(p.Offered), p.Direction, p.Duration, p.Warmup, formatFloat(p.Tolerance), gate)
}

func (p *Policing) derivedName() string { return "policing " + ratesText(p.MBR) }

// GateTime is how long the closed gate is offered traffic, each direction.
const GateTime = time.Second

func (p *Policing) estimate() time.Duration {
	d := times(len(p.MBR), p.Warmup+p.Duration)
	if p.Gate {
		d += GateTime
	}
	return times(len(p.Direction.Each()), d)
}

// needs: sessions of its own, one at a time.
func (*Policing) needs() Needs { return Needs{} }
