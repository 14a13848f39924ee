package scenario

import (
	"fmt"
	"time"
)

// KindCrash is the UPF killed under steady traffic: a restart by SIGKILL.
const KindCrash = "crash"

// Crash is a Restart whose UPF gets SIGKILL, as a crash, the OOM killer
// or a node's hard stop would end it, and is started again at once: what
// the sink misses is what a crash costs.
type Crash struct{ Restart }

func defaultCrash() Settings { return &Crash{*defaultRestart().(*Restart)} }

func (c *Crash) fields(d *decoder) []field { return c.Restart.fields(d) }

func (c *Crash) validate(v *validator, path string, s *Scenario) { c.Restart.validate(v, path, s) }

func (c *Crash) setup() string {
	return fmt.Sprintf("%s, %s, %s each way for %s, SIGKILL at %s",
		c.directionText(), bytesText(c.Size.String()), c.Rate, c.Duration, c.At)
}

func (c *Crash) derivedName() string {
	return fmt.Sprintf("crash %s %s %s", c.Direction, bytesText(c.Size.String()), c.Rate)
}

func (c *Crash) estimate() time.Duration { return c.Restart.estimate() }

func (*Crash) needs() Needs { return Needs{Restart: true} }
