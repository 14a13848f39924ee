package scenario

import (
	"fmt"
	"time"
)

// KindAbuse checks a UPF under floods of GTP-U that no session asked for.
const KindAbuse = "abuse"

// Abuse sends steady traffic both ways through the run's sessions for
// Duration, first alone, then beside a flood of Echo Requests (EchoRate)
// and of G-PDUs to TEIDs no session has (UnknownRate) from the gNB's side:
// the real traffic's loss may grow by Loss at most and its p99 latency by
// Latency; the Error Indications the UPF sends back may come at
// ErrorIndications a second per CPU of its host at most.
type Abuse struct {
	Rate             Rate // real traffic, each way
	EchoRate         Rate
	UnknownRate      Rate
	Duration         time.Duration
	Loss             float64       // percentage points
	Latency          time.Duration // of p99
	ErrorIndications Rate          // per CPU
}

func defaultAbuse() Settings {
	return &Abuse{Rate: Rate{PPS: 20_000}, EchoRate: Rate{PPS: 20_000}, UnknownRate: Rate{PPS: 100_000},
		Duration: 3 * time.Second, Loss: 0.01, Latency: 200 * time.Microsecond, ErrorIndications: Rate{PPS: 1000}}
}

func (a *Abuse) fields(d *decoder) []field {
	packets := parsePacketRate
	return []field{
		{"rate", value(d, &a.Rate, "a rate such as 20kpps", packets)},
		{"echo_rate", value(d, &a.EchoRate, "a rate such as 20kpps", packets)},
		{"unknown_teid_rate", value(d, &a.UnknownRate, "a rate such as 100kpps", packets)},
		{"duration", value(d, &a.Duration, "a duration such as 3s", parseDuration)},
		{"loss", value(d, &a.Loss, "a percentage such as 0.01%", parseLimit)},
		{"latency", value(d, &a.Latency, "a duration such as 200us", parseDuration)},
		{"error_indications", value(d, &a.ErrorIndications, "a rate such as 1kpps", packets)},
	}
}

func (a *Abuse) validate(v *validator, path string, s *Scenario) { v.withPFCP(path, s) }

func (a *Abuse) setup() string {
	return fmt.Sprintf("%s each way for %s, alone, then beside %s of Echo Requests and %s to unknown TEIDs",
		a.Rate, a.Duration, a.EchoRate, a.UnknownRate)
}

func (a *Abuse) derivedName() string { return "gtp-u abuse" }

func (a *Abuse) estimate() time.Duration { return 2 * a.Duration }

func (*Abuse) needs() Needs { return Needs{} }
