package scenario

import (
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindNDR is the highest rate within a loss tolerance (RFC 2544 §26.1).
const KindNDR = "ndr"

// NDR searches for the highest rate whose loss stays within LossTolerance,
// by binary search between 0 and MaxRate (RFC 2544 §26.1). With a
// tolerance of 0 it is the non-drop rate; with e.g. 0.5 %, a partial-drop
// rate (PDR).
type NDR struct {
	Direction     Direction
	Size          Size
	LossTolerance float64 // percent
	// Resolution ends the search when the highest passing and the lowest
	// failing rate are this close.
	Resolution    Rate
	MaxIterations int
	Trial         time.Duration // each trial sends this long
	// MaxRate is where the search starts; Max is the generator's flat-out
	// rate, measured by the first trial.
	MaxRate Rate
	Cores   Cores
	// Confirm is how many trials more the rate found must pass, each, to
	// be the result (RFC 2544 asks that the rate hold): one that fails
	// is a failed rate, and the search goes on below it.
	Confirm int
}

func defaultNDR() Settings {
	return &NDR{Direction: Both, Size: Size{Bytes: 1400}, Resolution: Rate{PPS: 10_000},
		MaxIterations: 10, Trial: 2 * time.Second, MaxRate: Rate{Max: true}, Confirm: 3}
}

func (n *NDR) fields(d *decoder) []field {
	return append(d.trafficFields(&n.Direction, &n.Size), []field{
		{"loss_tolerance", value(d, &n.LossTolerance, "a percentage such as 0% or 0.5%", parsePercent)},
		{"resolution", value(d, &n.Resolution, "a rate such as 10kpps", parseFixedRate)},
		{"max_iterations", value(d, &n.MaxIterations, "a number such as 10", parseCount(countRange{1, 64}))},
		{"trial", value(d, &n.Trial, "a duration such as 2s", parseDuration)},
		{"max_rate", value(d, &n.MaxRate, "a rate such as 2Mpps or max", parseRateAs("max"))},
		d.coresField(&n.Cores),
		{"confirm", value(d, &n.Confirm, "a number such as 3", parseCount(countRange{0, 16}))},
	}...)
}

// validate checks that the search has room: a resolution finer than where
// it starts. Rates in different units are compared by the run, which
// knows the frame size.
func (n *NDR) validate(v *validator, path string, _ *Scenario) {
	res, top := n.Resolution, n.MaxRate
	if !top.Max && (res.PPS > 0) == (top.PPS > 0) && res.PPS+res.BPS >= top.PPS+top.BPS {
		v.add(v.where(yamlfile.KeyPath(path, "resolution"), yamlfile.KeyPath(path, "max_rate")),
			"%s is not finer than max_rate, %s; the search would stop at once: lower it", res, top)
	}
}

func (n *NDR) setup() string {
	return fmt.Sprintf("%s, %s, loss <= %s%%, %s trials, at most %d, resolution %s, %d to confirm%s", n.Direction,
		bytesText(n.Size.String()), formatFloat(n.LossTolerance), n.Trial, n.MaxIterations, n.Resolution, n.Confirm, coresText(n.Cores))
}

func (n *NDR) derivedName() string {
	if n.LossTolerance > 0 {
		return fmt.Sprintf("pdr %s%% %s %s", formatFloat(n.LossTolerance), n.Direction, bytesText(n.Size.String()))
	}
	return fmt.Sprintf("ndr %s %s", n.Direction, bytesText(n.Size.String()))
}

// estimate counts the search's trials and one rate confirmed: a
// confirmation that fails costs more.
func (n *NDR) estimate() time.Duration {
	return times(len(n.Direction.Each())*(n.MaxIterations+n.Confirm), n.Trial)
}

func (*NDR) needs() Needs { return Needs{Reference: true} }
