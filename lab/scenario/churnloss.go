package scenario

import (
	"fmt"
	"time"
)

// KindChurnUnderTraffic checks that session churn leaves the other
// sessions' traffic alone.
const KindChurnUnderTraffic = "churn_under_traffic"

// ChurnUnderTraffic establishes Population sessions of its own, then for
// Duration, every second, establishes PerSecond new sessions, switches
// PerSecond of its population's downlinks (to the second gNB and back)
// and deletes PerSecond of those it established, while the run's
// sessions, which it never touches, carry Rate each way: they must lose
// nothing, and every request must be accepted.
type ChurnUnderTraffic struct {
	PerSecond  int
	Duration   time.Duration
	Population int
	Rate       Rate // each way, through the run's sessions
}

func defaultChurnUnderTraffic() Settings {
	return &ChurnUnderTraffic{PerSecond: 100, Duration: 5 * time.Second, Population: 200, Rate: Rate{PPS: 20_000}}
}

func (c *ChurnUnderTraffic) fields(d *decoder) []field {
	return []field{
		{"per_second", value(d, &c.PerSecond, "a number such as 100", parseCount(countRange{1, 100_000}))},
		{"duration", value(d, &c.Duration, "a duration such as 5s", parseDuration)},
		{"population", value(d, &c.Population, "a number such as 200", parseCount(countRange{1, 100_000}))},
		{"rate", value(d, &c.Rate, "a rate such as 20kpps", parsePacketRate)},
	}
}

func (c *ChurnUnderTraffic) validate(v *validator, path string, s *Scenario) { v.withPFCP(path, s) }

func (c *ChurnUnderTraffic) setup() string {
	return fmt.Sprintf("%d establishments, path switches and deletions a second for %s, among %d sessions of its own, beside %s each way",
		c.PerSecond, c.Duration, c.Population, c.Rate)
}

func (c *ChurnUnderTraffic) derivedName() string {
	return fmt.Sprintf("churn %d/s under traffic", c.PerSecond)
}

// estimate: the population's establishment and deletion take a few
// seconds at most beside the churn.
func (c *ChurnUnderTraffic) estimate() time.Duration { return c.Duration + time.Second }

// needs: the 1,000 sessions carrying traffic.
func (*ChurnUnderTraffic) needs() Needs { return Needs{Sessions: 1000} }
