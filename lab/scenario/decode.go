package scenario

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sluice-upf/sluice/internal/yamlfile"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/smf"
)

// decode reads data over s, which holds the defaults, and records in
// s.src the line of every key and list item it meets. It stops at the
// first problem, so problems come in file order.
func decode(s *Scenario, data []byte) error {
	d := &decoder{yamlfile.Decoder{Src: &yamlfile.Source{File: s.src.file, Lines: s.src.lines}}}
	root, err := d.Src.Document(data, "a scenario is one")
	if err != nil {
		return err
	}
	if root == nil {
		return &Error{File: s.src.file, Line: 1, Msg: "the file is empty; a scenario needs at least steps:"}
	}
	return d.scenario(root, s)
}

// decoder walks the YAML tree of one file with yamlfile's kit; the
// methods and functions below are its names in the step kinds' files.
type decoder struct {
	yamlfile.Decoder
}

func (d *decoder) fail(line int, path, format string, args ...any) error {
	return d.Fail(line, path, format, args...)
}

// want checks that n, at path, is of kind; shape says what to write.
func (d *decoder) want(n *yaml.Node, kind yaml.Kind, path, shape string) error {
	return d.Want(n, kind, path, shape)
}

// A field is a key of a mapping and how to read its value.
type field struct {
	key string
	set func(n *yaml.Node, path string) error
}

// mapping reads the mapping n at path field by field (see
// yamlfile.Decoder.Mapping); what names it in the hints ("a ping step"),
// and others are keys that belong elsewhere, to say so.
func (d *decoder) mapping(n *yaml.Node, path, what string, fields []field, others map[string]string) error {
	kit := make([]yamlfile.Field, len(fields))
	for i, f := range fields {
		kit[i] = yamlfile.Field{Key: f.key, Set: f.set}
	}
	return d.Mapping(n, path, what, kit, others)
}

// each reads every item of the list n at path. Null is an empty list.
func (d *decoder) each(n *yaml.Node, path, shape string, read func(item *yaml.Node, path string) error) error {
	return d.Each(n, path, shape, read)
}

// scalarAs reads the single value n at path with parse. Null reads as "".
func scalarAs[T any](d *decoder, n *yaml.Node, path, shape string, parse func(string) (T, error)) (T, error) {
	return yamlfile.ScalarAs(&d.Decoder, n, path, shape, parse)
}

// value is a field setter that reads one value into dst.
func value[T any](d *decoder, dst *T, shape string, parse func(string) (T, error)) func(*yaml.Node, string) error {
	return yamlfile.Value(&d.Decoder, dst, shape, parse)
}

// values is a field setter that reads a list of single values into dst;
// a single value is a list of one. The list may not be empty.
func values[T any](d *decoder, dst *[]T, shape string, parse func(string) (T, error)) func(*yaml.Node, string) error {
	return func(n *yaml.Node, path string) error {
		if n.Kind == yaml.ScalarNode && !yamlfile.IsNull(n) {
			n = &yaml.Node{Kind: yaml.SequenceNode, Line: n.Line, Content: []*yaml.Node{n}}
		}
		list, err := yamlfile.List(&d.Decoder, n, path, "a list such as ["+shape+"]", shape, parse)
		switch {
		case err != nil:
			return err
		case len(list) == 0:
			return d.fail(n.Line, path, "empty; want a list such as [%s]", shape)
		}
		*dst = list
		return nil
	}
}

func (d *decoder) scenario(root *yaml.Node, s *Scenario) error {
	return d.mapping(root, "", "a scenario", []field{
		{"name", value(d, &s.Name, "a name such as smoke", parseName(64))},
		{"topology", func(n *yaml.Node, path string) error { return d.topology(n, path, &s.Topology) }},
		{"upf", func(n *yaml.Node, path string) error { return d.upf(n, path, &s.UPF) }},
		{"reference", value(d, &s.Reference, "true or false", yamlfile.ParseBool)},
		{"sessions", func(n *yaml.Node, path string) error { return d.sessions(n, path, &s.Sessions) }},
		{"steps", func(n *yaml.Node, path string) error { return d.steps(n, path, &s.Steps) }},
		{"outputs", func(n *yaml.Node, path string) error { return d.outputs(n, path, &s.Outputs) }},
	}, nil)
}

func (d *decoder) topology(n *yaml.Node, path string, t *Topology) error {
	return d.mapping(n, path, "topology", []field{
		{"name", value(d, &t.Name, "a name such as upflab", parseName(24))},
		{"n9", value(d, &t.N9, "true or false", yamlfile.ParseBool)},
		{"queues", value(d, &t.Queues, "a number such as 2", parseCount(countRange{1, 64}))},
	}, nil)
}

// upf reads the UPF under test: a kind alone (upf: upfd), or a mapping.
func (d *decoder) upf(n *yaml.Node, path string, u *UPF) error {
	kinds := oneOf("a UPF kind", UPFBuiltIn, UPFReference, UPFCommand)
	if n.Kind == yaml.ScalarNode && !yamlfile.IsNull(n) {
		return value(d, &u.Kind, "upfd, reference or command", kinds)(n, path)
	}
	var configNode *yaml.Node
	err := d.mapping(n, path, "upf", []field{
		{"kind", value(d, &u.Kind, "upfd, reference or command", kinds)},
		{"command", value(d, &u.Command, "a command line such as eupf --config {config}", parseText)},
		{"config", func(n *yaml.Node, path string) error { configNode = n; return nil }},
		{"name", value(d, &u.Name, "a name such as eUPF", parseText)},
		{"version", value(d, &u.Version, "a version such as v0.6.4", parseText)},
		{"startup", value(d, &u.Startup, "a duration such as 10s", parseDuration)},
	}, nil)
	if err != nil {
		return err
	}
	if u.Command != "" && d.Src.Line(yamlfile.KeyPath(path, "kind")) == 0 {
		u.Kind = UPFCommand // a command says what kind it is
	}
	if configNode == nil || yamlfile.IsNull(configNode) {
		return nil
	}
	u.Config, err = d.upfConfig(configNode, yamlfile.KeyPath(path, "config"), u.Kind)
	return err
}

// upfConfig reads upf.config: upfd.yaml keys for upfd, the text of a file
// for a command. Validate checks upfd's keys, by the lines noted here.
func (d *decoder) upfConfig(n *yaml.Node, path, kind string) ([]byte, error) {
	switch kind {
	case UPFBuiltIn:
		if err := d.want(n, yaml.MappingNode, path, "a mapping of upfd.yaml keys, e.g. {max_sessions: 200000}"); err != nil {
			return nil, err
		}
		if err := d.noteLines(n, path); err != nil {
			return nil, err
		}
		return yaml.Marshal(n)
	case UPFCommand:
		if err := d.want(n, yaml.ScalarNode, path, "the text of the UPF's config file, after config: |"); err != nil {
			return nil, err
		}
		return []byte(n.Value), nil
	}
	return nil, d.fail(n.Line, path, "the reference forwarder takes no config; remove it")
}

// noteLines records the line of every key and item below n, whose keys
// another parser checks.
func (d *decoder) noteLines(n *yaml.Node, path string) error {
	switch n.Kind {
	case yaml.AliasNode:
		return d.fail(n.Line, path, "aliases are not supported; write the value out in full")
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			sub := yamlfile.KeyPath(path, n.Content[i].Value)
			d.Src.Lines[sub] = n.Content[i].Line
			if err := d.noteLines(n.Content[i+1], sub); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			sub := d.Src.Item(path, i, item)
			if err := d.noteLines(item, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *decoder) sessions(n *yaml.Node, path string, s *Sessions) error {
	return d.mapping(n, path, "sessions", []field{
		{"count", value(d, &s.Count, "a number such as 1000", parseCount(countRange{1, MaxSessions}))},
		{"profile", value(d, &s.Profile, "plain, open5gs or free5gc", parseProfile)},
		{"flows", value(d, &s.Flows, "a number such as 4", parseCount(countRange{1, 1024}))},
	}, nil)
}

func (d *decoder) outputs(n *yaml.Node, path string, o *Outputs) error {
	return d.mapping(n, path, "outputs", []field{
		{"directory", value(d, &o.Directory, "a directory such as results/{name}-{time}", parseText)},
		{"formats", values(d, &o.Formats, "json, csv, md, png", oneOf("a format", report.Formats...))},
	}, nil)
}

func (d *decoder) steps(n *yaml.Node, path string, steps *[]Step) error {
	list := []Step{}
	err := d.each(n, path, "a list of steps, each with kind: and its keys", func(item *yaml.Node, sub string) error {
		st, err := d.step(item, sub)
		if st != nil {
			list = append(list, *st)
		}
		return err
	})
	*steps = list
	return err
}

// step reads one step: its kind first, wherever it stands, then the keys
// that kind takes over its defaults.
func (d *decoder) step(n *yaml.Node, path string) (*Step, error) {
	if err := d.want(n, yaml.MappingNode, path, "a mapping with kind: and the step's keys"); err != nil {
		return nil, err
	}
	kindPath := yamlfile.KeyPath(path, "kind")
	var kindNode *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "kind" {
			kindNode = n.Content[i+1]
			d.Src.Lines[kindPath] = n.Content[i].Line
			break
		}
	}
	if kindNode == nil {
		return nil, d.fail(n.Line, path, "no kind; add kind: %s", yamlfile.OrList(Kinds))
	}
	kind, err := scalarAs(d, kindNode, kindPath, yamlfile.OrList(Kinds), oneOf("a step kind", Kinds...))
	if err != nil {
		return nil, err
	}
	st := newStep(kind)
	fields := append([]field{
		{"kind", func(*yaml.Node, string) error { return nil }},
		{"name", value(d, &st.Name, "a name such as \"uplink 64 B\"", parseText)},
	}, st.Settings.fields(d)...)
	article := "a "
	if strings.ContainsRune("aeiou", rune(kind[0])) {
		article = "an "
	}
	return st, d.mapping(n, path, article+kind+" step", fields, stepKeyOwners(kind))
}

// trafficFields are the keys of the steps that send the generator's
// traffic one way or both.
func (d *decoder) trafficFields(direction *Direction, size *Size) []field {
	return []field{
		{"direction", value(d, direction, "uplink, downlink or both", parseDirection)},
		{"size", value(d, size, "a size such as 1400 or imix", parseSize)},
	}
}

// stepKeyOwners maps the keys of the other step kinds to what they are, so
// that a key in the wrong kind of step is named as such.
func stepKeyOwners(kind string) map[string]string {
	owners := map[string]string{}
	for _, other := range Kinds {
		if other == kind {
			continue
		}
		for _, f := range newStep(other).Settings.fields(&decoder{}) {
			if _, taken := owners[f.key]; !taken {
				owners[f.key] = other + " steps"
			}
		}
	}
	return owners
}

func parseProfile(s string) (smf.Profile, error) {
	names := make([]string, len(smf.Profiles))
	for i, p := range smf.Profiles {
		names[i] = string(p)
	}
	p, err := oneOf("a profile", names...)(s)
	return smf.Profile(p), err
}

func parseDirection(s string) (Direction, error) {
	d, err := oneOf("a direction", string(Uplink), string(Downlink), string(Both))(s)
	return Direction(d), err
}
