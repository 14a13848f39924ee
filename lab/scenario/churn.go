package scenario

import (
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindChurn is sessions deleted and established again, per second.
const KindChurn = "churn"

// Churn deletes sessions and establishes them again, PerSecond of them
// each second, for Duration; the rest keep their traffic rules.
type Churn struct {
	PerSecond int
	Duration  time.Duration
}

func defaultChurn() Settings { return &Churn{PerSecond: 100, Duration: 10 * time.Second} }

func (c *Churn) fields(d *decoder) []field {
	return []field{
		{"per_second", value(d, &c.PerSecond, "a number such as 100", parseCount(countRange{1, MaxSessions}))},
		{"duration", value(d, &c.Duration, "a duration such as 10s", parseDuration)},
	}
}

func (c *Churn) validate(v *validator, path string, s *Scenario) {
	if sessions := s.Sessions.Count; c.PerSecond > sessions {
		v.add(yamlfile.KeyPath(path, "per_second"), "%d is more than the %d sessions%s; churn re-establishes sessions that exist",
			c.PerSecond, sessions, v.onLine("sessions.count"))
	}
}

func (c *Churn) setup() string { return fmt.Sprintf("%d/s for %s", c.PerSecond, c.Duration) }

func (c *Churn) derivedName() string { return fmt.Sprintf("churn %d/s", c.PerSecond) }

func (c *Churn) estimate() time.Duration { return c.Duration }

// needs: the sessions it churns each second. Churn needs PFCP, which the
// reference forwarder does not speak.
func (c *Churn) needs() Needs { return Needs{Sessions: c.PerSecond} }
