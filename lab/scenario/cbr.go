package scenario

import (
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindCBR is the goodput at a constant rate or flood, by size.
const KindCBR = "cbr"

// CBR sends at a constant rate, or flood, for Duration per size, like ocbr,
// and measures the goodput that arrives.
type CBR struct {
	Sizes    []int
	Rate     Rate
	Duration time.Duration // per size
}

func defaultCBR() Settings {
	return &CBR{Sizes: []int{64, 256, 512, 1024, 1400}, Rate: Rate{Max: true}, Duration: 2 * time.Second}
}

func (c *CBR) fields(d *decoder) []field {
	return []field{
		{"sizes", values(d, &c.Sizes, "64, 1400", parsePayload)},
		{"rate", value(d, &c.Rate, "a rate such as 100kpps or flood", parseRateAs("flood"))},
		{"duration", value(d, &c.Duration, "a duration such as 2s", parseDuration)},
	}
}

func (c *CBR) validate(v *validator, path string, _ *Scenario) {
	v.distinct(yamlfile.KeyPath(path, "sizes"), c.Sizes)
}

func (c *CBR) setup() string {
	return fmt.Sprintf("%s, %s, %s each", bytesText(sizesText(c.Sizes)), c.Rate, c.Duration)
}

func (c *CBR) derivedName() string {
	return fmt.Sprintf("cbr %s %s", bytesText(sizesText(c.Sizes)), c.Rate)
}

func (c *CBR) estimate() time.Duration { return times(len(c.Sizes), c.Duration) }

// needs: a probe, as ping.
func (*CBR) needs() Needs { return Needs{} }
