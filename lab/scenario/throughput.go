package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindThroughput is a fixed or flat-out load for a while.
const KindThroughput = "throughput"

// Throughput sends at one rate for a while, in each direction asked for.
type Throughput struct {
	Direction Direction
	Size      Size
	Rate      Rate
	Duration  time.Duration // per direction, all rounds together
	Cores     Cores
	// Rounds splits each direction's time into rounds that take turns
	// with the reference forwarder's (and with the other direction's),
	// so that both meet the same moments of a busy machine; each round
	// has its ratio, and the step's is their median.
	Rounds int
}

// minRound is the shortest round a step may have: shorter, the time it
// takes to start and stop the generator's workers weighs on the rate.
const minRound = 20 * time.Millisecond

func defaultThroughput() Settings {
	return &Throughput{Direction: Both, Size: Size{Bytes: 1400}, Rate: Rate{Max: true}, Duration: 5 * time.Second, Rounds: 1}
}

func (t *Throughput) fields(d *decoder) []field {
	return append(d.trafficFields(&t.Direction, &t.Size),
		field{"rate", value(d, &t.Rate, "a rate such as 1Mpps or max", parseRateAs("max"))},
		field{"duration", value(d, &t.Duration, "a duration such as 5s", parseDuration)},
		d.coresField(&t.Cores),
		field{"rounds", value(d, &t.Rounds, "a number such as 20", parseCount(countRange{1, 1000}))},
	)
}

// validate checks that each round is long enough to measure.
func (t *Throughput) validate(v *validator, path string, _ *Scenario) {
	if round := t.Round(); round < minRound {
		rounds := yamlfile.KeyPath(path, "rounds")
		v.add(v.where(rounds, yamlfile.KeyPath(path, "duration")), "%d rounds of %s are %s each; want %s a round at least: fewer rounds or a longer duration",
			t.Rounds, t.Duration, round, minRound)
	}
}

// Round is how long each round sends, in each direction.
func (t *Throughput) Round() time.Duration { return t.Duration / time.Duration(max(t.Rounds, 1)) }

func (t *Throughput) setup() string {
	return fmt.Sprintf("%s, %s, %s, %s each%s%s", t.Direction, bytesText(t.Size.String()), t.Rate, t.Duration,
		coresText(t.Cores), roundsText(t.Rounds))
}

func (t *Throughput) derivedName() string {
	return fmt.Sprintf("throughput %s %s %s%s", t.Direction, bytesText(t.Size.String()), t.Rate, strings.ReplaceAll(coresText(t.Cores), ",", ""))
}

// roundsText is what a step's setup says of its rounds: nothing for one.
func roundsText(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" in %d rounds", n)
}

func (t *Throughput) estimate() time.Duration { return times(len(t.Direction.Each()), t.Duration) }

func (*Throughput) needs() Needs { return Needs{Reference: true} }
