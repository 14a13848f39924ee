package scenario

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindRestart is the UPF restarted under steady traffic.
const KindRestart = "restart"

// Restart sends steady traffic and restarts the UPF under test in the
// middle of it: SIGTERM, wait for the exit, start it again, wait until N4
// answers. What the sink misses is what the restart cost.
type Restart struct {
	// Direction Both sends uplink and downlink at once, unlike the other
	// steps: there is one restart, under both.
	Direction Direction
	Size      Size
	Rate      Rate          // per direction; fixed, so that loss is the restart's alone
	Duration  time.Duration // of the traffic
	At        time.Duration // SIGTERM this far into the traffic
}

func defaultRestart() Settings {
	return &Restart{Direction: Both, Size: Size{Bytes: 1400}, Rate: Rate{PPS: 100_000},
		Duration: 6 * time.Second, At: 2 * time.Second}
}

func (r *Restart) fields(d *decoder) []field {
	return append(d.trafficFields(&r.Direction, &r.Size),
		field{"rate", value(d, &r.Rate, "a rate such as 100kpps", parseSteadyRate)},
		field{"duration", value(d, &r.Duration, "a duration such as 6s", parseDuration)},
		field{"at", value(d, &r.At, "a duration such as 2s", parseDuration)},
	)
}

// parseSteadyRate reads a restart's rate, which must be fixed: flat out,
// frames are lost whether the UPF restarts or not.
func parseSteadyRate(s string) (Rate, error) {
	if strings.EqualFold(s, "max") || strings.EqualFold(s, "flood") {
		return Rate{}, fmt.Errorf("%s loses frames with or without a restart; give a steady rate below saturation, e.g. 100kpps",
			yamlfile.Quote(s))
	}
	return parseFixedRate(s)
}

// validate checks that the restart (or crash) falls within the traffic.
func (r *Restart) validate(v *validator, path string, _ *Scenario) {
	if r.At < r.Duration {
		return
	}
	at, duration := yamlfile.KeyPath(path, "at"), yamlfile.KeyPath(path, "duration")
	if v.src.line(at) > 0 {
		v.add(at, "%s is not before the end of the traffic, duration: %s%s; restart within it, e.g. at: %s",
			r.At, r.Duration, v.onLine(duration), (r.Duration / 3).Round(time.Millisecond))
		return
	}
	v.add(v.where(duration, path), "%s ends the traffic before the restart, at %s (at's default); make it longer, or set at: below it",
		r.Duration, r.At)
}

func (r *Restart) setup() string {
	return fmt.Sprintf("%s, %s, %s each way for %s, restart at %s",
		r.directionText(), bytesText(r.Size.String()), r.Rate, r.Duration, r.At)
}

func (r *Restart) derivedName() string {
	return fmt.Sprintf("restart %s %s %s", r.Direction, bytesText(r.Size.String()), r.Rate)
}

func (r *Restart) estimate() time.Duration { return r.Duration } // both directions at once

func (*Restart) needs() Needs { return Needs{Restart: true} }

func (r *Restart) directionText() string {
	if r.Direction == Both {
		return "both at once"
	}
	return string(r.Direction)
}

// Restarts says whether a step restarts the UPF under test: the lab then
// runs upfd pinned for the whole scenario.
func (s *Scenario) Restarts() bool {
	return s.firstRestart() >= 0
}

func (s *Scenario) firstRestart() int {
	for i, st := range s.Steps {
		if st.needs().Restart {
			return i
		}
	}
	return -1
}

// restarts checks what restart steps need of the UPF under test: a
// process to restart, and pins that are the lab's own to remove.
func (v *validator) restarts(s *Scenario) {
	first := s.firstRestart()
	if first < 0 {
		return
	}
	step := yamlfile.ItemPath("steps", first)
	switch s.UPF.Kind {
	case UPFReference:
		kind := v.where("upf.kind", "upf")
		v.add(yamlfile.KeyPath(step, "kind"), "the reference forwarder is no process to restart; a restart step measures upfd or a command UPF, so change %s%s",
			kind, v.onLine(kind))
	case UPFBuiltIn:
		for _, key := range []string{"pin_path", "state_file"} {
			if configSets(s.UPF.Config, key) {
				v.add("upf.config."+key, "the lab sets it for the restart step, %s%s, and removes what it pinned after the run; remove %s",
					step, v.onLine(yamlfile.KeyPath(step, "kind")), key)
			}
		}
	}
}

// configSets says whether upfd config overrides set a top-level key.
func configSets(config []byte, key string) bool {
	var keys map[string]yaml.Node
	if yaml.Unmarshal(config, &keys) != nil {
		return false
	}
	_, ok := keys[key]
	return ok
}
