package scenario

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/sluice-upf/sluice/internal/config"
	"github.com/sluice-upf/sluice/internal/yamlfile"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/topo"
)

// Validate checks the rules that a value alone cannot express and how
// values relate. If s came from Parse or Load, errors name the file and the
// line of the key at fault, or of its nearest parent the file sets; of
// several problems, the one earliest in the file is returned.
func (s *Scenario) Validate() error {
	v := &validator{src: s.src}
	v.upf(s)
	v.sessions(s.Sessions)
	v.steps(s)
	v.restarts(s)
	v.outputs(s.Outputs)
	return yamlfile.Earliest(v.problems)
}

// validator gathers every problem, so that the earliest in the file can be
// reported whatever order the checks run in.
type validator struct {
	src      *source
	problems []*Error
}

func (v *validator) add(path, format string, args ...any) {
	v.problems = append(v.problems, &Error{File: v.src.name(), Line: v.nearestLine(path), Key: path, Msg: fmt.Sprintf(format, args...)})
}

// nearestLine is the line of path, or of its nearest parent the file sets:
// a key left out is reported where it would go.
func (v *validator) nearestLine(path string) int {
	for path != "" {
		if line := v.src.line(path); line > 0 {
			return line
		}
		cut := strings.LastIndexAny(path, ".[")
		if cut < 0 {
			break
		}
		path = path[:cut]
	}
	return 0
}

// onLine says " (line N)" for a path the file sets, to point at the other
// half of a conflict.
func (v *validator) onLine(path string) string {
	if line := v.src.line(path); line > 0 {
		return fmt.Sprintf(" (line %d)", line)
	}
	return ""
}

func (v *validator) upf(s *Scenario) {
	u := s.UPF
	if u.Command != "" && u.Kind != UPFCommand {
		v.add("upf.command", "only a command UPF runs a command; set kind: command, or remove command:")
	}
	switch u.Kind {
	case UPFCommand:
		v.command(u, s.Topology)
	case UPFBuiltIn:
		v.upfdConfig(u.Config, s.Sessions.Count)
	case UPFReference:
		if len(u.Config) > 0 {
			v.add("upf.config", "the reference forwarder takes no config; remove it")
		}
	default:
		v.add("upf.kind", "%s is not a UPF kind; want upfd, reference or command", yamlfile.Quote(u.Kind))
	}
	if u.Startup <= 0 {
		v.add("upf.startup", "%s is not above 0; want a duration such as 10s", u.Startup)
	}
}

// sessions checks that the sessions fit the lab's UE pools, which the SMF
// emulator numbers them from, and that the generator and the sink hold
// their flows.
func (v *validator) sessions(s Sessions) {
	if room := smf.Capacity(smf.Config{Profile: s.Profile}); s.Count > room {
		pools := "pool " + topo.UEPool.String() + " holds"
		if s.Profile == smf.Open5GS {
			pools = "pools " + topo.UEPool.String() + " and " + topo.UEPoolV6.String() + " hold"
		}
		v.add("sessions.count", "%d sessions are more than the %d the lab's UE %s; lower it to %d", s.Count, room, pools, room)
		return
	}
	if flows := s.Count * s.Flows; flows > MaxFlows {
		v.add(v.where("sessions.flows", "sessions.count"), "%d sessions × %d flows are %d flows; the generator and the sink keep %d at the most, so lower sessions.count or sessions.flows",
			s.Count, s.Flows, flows, MaxFlows)
	}
}

// command checks a command UPF's placeholders against the topology and
// its config.
func (v *validator) command(u UPF, t Topology) {
	const path = "upf.command"
	if strings.TrimSpace(u.Command) == "" {
		v.add(v.where(path, "upf.kind"), "a command UPF needs a command line, e.g. command: eupf --config {config}")
		return
	}
	used := placeholdersIn(u.Command)
	for _, name := range used {
		if !slices.Contains(Placeholders, name) {
			v.add(path, "{%s} is not a placeholder; want %s", name, placeholderList(Placeholders))
			return
		}
	}
	switch hasConfig := len(u.Config) > 0; {
	case !t.N9 && (slices.Contains(used, "n9") || slices.Contains(used, "n9_addr")):
		v.add(path, "uses N9, which the topology leaves out; set topology.n9: true")
	case slices.Contains(used, "config") && !hasConfig:
		v.add(path, "{config} names the file of upf.config, which is not set; add config: | and the file's text")
	case hasConfig && !slices.Contains(used, "config"):
		v.add("upf.config", "the command never reads it; pass its file with {config}")
	}
}

// upfdConfig checks upfd's config overrides with upfd's own parser, and
// that they hold the sessions.
func (v *validator) upfdConfig(data []byte, sessions int) {
	c, err := config.Parse("", data)
	if err != nil {
		// With no file name, config's errors read "key: what to write",
		// or just the message when no key is at fault.
		key, msg := "upf.config", err.Error()
		if inner, rest, ok := strings.Cut(msg, ": "); ok && configKey.MatchString(inner) {
			key, msg = yamlfile.KeyPath(key, inner), rest
		}
		v.add(key, "%s", msg)
		return
	}
	const maxSessions = "upf.config.max_sessions"
	switch {
	case sessions <= c.MaxSessions:
	case v.src.line("sessions.count") == 0 && v.src.line(maxSessions) > 0:
		v.add(maxSessions, "%d is fewer than the %d sessions of sessions.count; raise it to %d", c.MaxSessions, sessions, sessions)
	default:
		v.add("sessions.count", "%d sessions are more than upfd's max_sessions, %d%s; raise %s to %d",
			sessions, c.MaxSessions, v.onLine(maxSessions), maxSessions, sessions)
	}
}

// configKey matches the key paths upfd's config errors start with.
var configKey = regexp.MustCompile(`^[a-z_0-9]+(\[\d+\])?(\.[a-z_0-9]+(\[\d+\])?)*$`)

// where picks the first of paths that the file sets, or the first path.
func (v *validator) where(paths ...string) string {
	for _, p := range paths {
		if v.src.line(p) > 0 {
			return p
		}
	}
	return paths[0]
}

func (v *validator) steps(s *Scenario) {
	if len(s.Steps) == 0 {
		v.add("steps", "no steps; add at least one, e.g. - {kind: throughput, direction: both, size: 1400}")
		return
	}
	named := map[string]string{} // step name to the path of the step that has it
	for i, st := range s.Steps {
		path := yamlfile.ItemPath("steps", i)
		// Only a Step built in code can fail these; Parse makes whole ones.
		want := newStep(st.Kind)
		switch {
		case want == nil:
			v.add(path, "no step kind %s; use one of %s", yamlfile.Quote(st.Kind), strings.Join(Kinds, ", "))
			continue
		case st.Settings == nil:
			v.add(path, "a %s step without its settings: set Settings to a %T", yamlfile.Quote(st.Kind), want.Settings)
			continue
		case reflect.TypeOf(st.Settings) != reflect.TypeOf(want.Settings):
			v.add(path, "a %s step with the settings of another kind (%T); set Settings to a %T", yamlfile.Quote(st.Kind), st.Settings, want.Settings)
			continue
		}
		v.stepName(path, st.Name, named)
		st.Settings.validate(v, path, s)
	}
}

func (v *validator) stepName(path, name string, named map[string]string) {
	at := v.where(yamlfile.KeyPath(path, "name"), path)
	if other, taken := named[name]; taken {
		v.add(at, "%s is also the name of %s%s; steps are matched by name, so give one a name: of its own",
			yamlfile.Quote(name), other, v.onLine(other))
		return
	}
	named[name] = path
}

// distinct refuses a size listed twice: the plots would draw it twice.
func (v *validator) distinct(path string, list []int) {
	for i, n := range list {
		if j := slices.Index(list, n); j < i {
			v.add(yamlfile.ItemPath(path, i), "%d is listed already as %s; list each once", n, yamlfile.ItemPath(path, j))
		}
	}
}

func (v *validator) outputs(o Outputs) {
	if strings.TrimSpace(o.Directory) == "" {
		v.add("outputs.directory", "empty; want a directory such as upflab-results/{name}-{time}")
	}
	for _, name := range placeholdersIn(o.Directory) {
		if name != "name" && name != "time" {
			v.add("outputs.directory", "{%s} is not a placeholder here; want {name} or {time}", name)
		}
	}
	for i, f := range o.Formats {
		at := yamlfile.ItemPath("outputs.formats", i)
		if !slices.Contains(report.Formats, f) {
			v.add(at, "%s is not a format; want %s", yamlfile.Quote(f), yamlfile.OrList(report.Formats))
		} else if j := slices.Index(o.Formats, f); j < i {
			v.add(at, "%s is listed already as %s; list each once", f, yamlfile.ItemPath("outputs.formats", j))
		}
	}
}
