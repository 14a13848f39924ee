package scenario

import (
	"fmt"
	"time"
)

// KindOverload checks a UPF beyond its session limit.
const KindOverload = "overload"

// Overload asks the UPF for Sessions more sessions at once, as fast as the
// SMF emulator goes (a window of requests in flight), more than it may
// hold: those beyond its limit must be refused with No resources
// available, the UPF must answer N4 after, and the sessions it had must
// forward meanwhile: traffic at Rate each way through them must lose
// nothing. The sessions it took are deleted again.
type Overload struct {
	Sessions int
	Rate     Rate // each way, through the sessions of the run
}

func defaultOverload() Settings {
	return &Overload{Sessions: 5000, Rate: Rate{PPS: 20_000}}
}

func (o *Overload) fields(d *decoder) []field {
	return []field{
		{"sessions", value(d, &o.Sessions, "a number such as 5000", parseCount(countRange{1, MaxSessions}))},
		{"rate", value(d, &o.Rate, "a rate such as 20kpps", parsePacketRate)},
	}
}

func (o *Overload) validate(v *validator, path string, s *Scenario) { v.withPFCP(path, s) }

func (o *Overload) setup() string {
	return fmt.Sprintf("%d more sessions asked for at once, %s each way through the others", o.Sessions, o.Rate)
}

func (o *Overload) derivedName() string { return fmt.Sprintf("overload %d", o.Sessions) }

// estimate: the flood takes a few seconds on this VM (some thousands a
// second), the deletion as long.
func (o *Overload) estimate() time.Duration {
	return 2*time.Second + time.Duration(o.Sessions)*time.Millisecond
}

func (*Overload) needs() Needs { return Needs{} }
