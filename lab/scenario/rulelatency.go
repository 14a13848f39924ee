package scenario

import (
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindRuleLatency checks how soon a UPF's rules take effect.
const KindRuleLatency = "rule_latency"

// RuleLatency establishes Sessions sessions of its own, one at a time,
// while the run's sessions carry Rate each way; the DN host sends to each
// new UE every Interval from the Establishment Response on, and the time
// from the Response to the first frame at the gNB is one sample. A path
// switch of the session to the gNB's second address is then timed alike,
// from the Modification Response to the first frame at that address.
// p50 and p99 of each must be within P50 and P99; a rule that forwards
// nothing within Timeout fails the check.
type RuleLatency struct {
	Sessions int
	Rate     Rate          // each way, through the run's sessions
	Interval time.Duration // between the DN host's datagrams: the figures' resolution
	P50, P99 time.Duration
	Timeout  time.Duration
}

func defaultRuleLatency() Settings {
	return &RuleLatency{Sessions: 100, Rate: Rate{PPS: 20_000}, Interval: 200 * time.Microsecond,
		P50: 5 * time.Millisecond, P99: 50 * time.Millisecond, Timeout: time.Second}
}

func (l *RuleLatency) fields(d *decoder) []field {
	return []field{
		{"sessions", value(d, &l.Sessions, "a number such as 100", parseCount(countRange{2, 10_000}))},
		{"rate", value(d, &l.Rate, "a rate such as 20kpps", parsePacketRate)},
		{"interval", value(d, &l.Interval, "a duration such as 200us", parseDuration)},
		{"p50", value(d, &l.P50, "a duration such as 5ms", parseDuration)},
		{"p99", value(d, &l.P99, "a duration such as 50ms", parseDuration)},
		{"timeout", value(d, &l.Timeout, "a duration such as 1s", parseDuration)},
	}
}

func (l *RuleLatency) validate(v *validator, path string, s *Scenario) {
	v.withPFCP(path, s)
	switch {
	case l.P50 > l.P99:
		v.add(yamlfile.KeyPath(path, "p50"), "%s is above p99's %s; the median cannot be", l.P50, l.P99)
	case l.Interval >= l.P50:
		v.add(yamlfile.KeyPath(path, "interval"), "%s is not below p50's %s; the datagrams must come more often than the limit they measure", l.Interval, l.P50)
	case l.Timeout <= l.P99:
		v.add(yamlfile.KeyPath(path, "timeout"), "%s is not above p99's %s; give the rule more time than its limit", l.Timeout, l.P99)
	}
}

func (l *RuleLatency) setup() string {
	return fmt.Sprintf("%d sessions established and switched one at a time, a datagram every %s, beside %s each way; p50 ≤ %s, p99 ≤ %s",
		l.Sessions, l.Interval, l.Rate, l.P50, l.P99)
}

func (l *RuleLatency) derivedName() string { return "rule latency" }

// estimate: each session's two rules take a few milliseconds, its
// deletion as long; at most Timeout each when they do not forward.
func (l *RuleLatency) estimate() time.Duration {
	return time.Second + times(l.Sessions, 20*time.Millisecond)
}

// needs: the 1,000 sessions carrying traffic meanwhile.
func (*RuleLatency) needs() Needs { return Needs{Sessions: 1000} }
