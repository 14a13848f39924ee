package scenario

import (
	"fmt"
	"time"
)

// KindThroughput is a fixed or flat-out load for a while.
const KindThroughput = "throughput"

// Throughput sends at one rate for a while, in each direction asked for.
type Throughput struct {
	Direction Direction
	Size      Size
	Rate      Rate
	Duration  time.Duration // per direction
}

func defaultThroughput() Settings {
	return &Throughput{Direction: Both, Size: Size{Bytes: 1400}, Rate: Rate{Max: true}, Duration: 5 * time.Second}
}

func (t *Throughput) fields(d *decoder) []field {
	return append(d.trafficFields(&t.Direction, &t.Size),
		field{"rate", value(d, &t.Rate, "a rate such as 1Mpps or max", parseRateAs("max"))},
		field{"duration", value(d, &t.Duration, "a duration such as 5s", parseDuration)},
	)
}

func (*Throughput) validate(*validator, string, *Scenario) {}

func (t *Throughput) setup() string {
	return fmt.Sprintf("%s, %s, %s, %s each", t.Direction, bytesText(t.Size.String()), t.Rate, t.Duration)
}

func (t *Throughput) derivedName() string {
	return fmt.Sprintf("throughput %s %s %s", t.Direction, bytesText(t.Size.String()), t.Rate)
}

func (t *Throughput) estimate() time.Duration { return times(len(t.Direction.Each()), t.Duration) }

func (*Throughput) needs() Needs { return Needs{Reference: true} }
