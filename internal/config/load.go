package config

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// ErrHelp is Load's error when the command line asks for help (-h,
// --help): print Usage and exit successfully.
var ErrHelp = errors.New("help requested")

// Load reads upfd's configuration from its sources, each over the one
// before: the defaults; the file named by --config, or else by UPFD_CONFIG
// (none: the defaults alone); the UPFD_ variables of env, in the form of
// os.Environ; and the flags at the start of args, the command line after
// the program (and its subcommand). It validates the result, but does not
// look at the host: see CheckHost.
//
// It returns the arguments that follow the flags: from the first that is
// not a flag, or after "--". Variables and flags that name no key are
// refused, so that a typo cannot go unnoticed; so is a flag given twice.
// Kubernetes' service links (UPFD_SERVICE_HOST, UPFD_PORT_8805_UDP, ...,
// made for a Service called upfd) are not keys and are skipped.
func Load(args, env []string) (*Config, []string, error) {
	cmd, rest, err := parseArgs(args)
	if err != nil {
		return nil, nil, err
	}
	vars, err := parseEnv(env)
	if err != nil {
		return nil, nil, err
	}
	path := cmd.config
	if path == "" {
		path = vars.config
	}
	c, err := read(path)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range append(vars.assignments, cmd.assignments...) {
		if err := c.apply(a); err != nil {
			return nil, nil, err
		}
	}
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	return c, rest, nil
}

// read decodes the file at path over the defaults, without validating:
// variables and flags may yet fix what is missing. No path gives the
// defaults.
func read(path string) (*Config, error) {
	c := Default()
	c.origin = &origin{file: yamlfile.NewSource(path)}
	if path == "" {
		return c, nil
	}
	data, err := yamlfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return c, decode(c, c.origin.file, data)
}

// Sources says where c was read from, in the order applied: the file,
// then "env UPFD_X" and "flag --x" for each variable and flag that set a
// key. It names no values, so it may be logged.
func (c *Config) Sources() []string {
	var list []string
	if name := c.origin.fileSource().Name(); name != "" {
		list = append(list, name)
	}
	if c.origin != nil {
		for _, o := range c.origin.overrides {
			list = append(list, o.src.File)
		}
	}
	return list
}

// assignment is one variable or flag: the setting it sets, its text, and
// how errors name it ("env UPFD_PFCP_T1", "flag --pfcp.t1").
type assignment struct {
	setting *setting
	text    string
	from    string
}

// assignments are what the environment or the command line hold.
type assignments struct {
	config      string // the file they name, or ""
	assignments []assignment
}

// apply decodes a over c as if the file had set its key, and records
// where the key came from.
func (c *Config) apply(a assignment) error {
	src := yamlfile.NewSource(a.from)
	value, err := a.setting.node(src, a.text)
	if err == nil {
		err = config(&decoder{Src: src}, nest(a.setting.path, value), c)
	}
	if err != nil {
		return relabel(err, a.setting)
	}
	c.origin.overrides = append(c.origin.overrides, override{path: a.setting.path, src: src})
	return nil
}

// node reads text as the value of s.
func (s *setting) node(src *source, text string) (*yaml.Node, error) {
	text = strings.TrimSpace(text)
	if s.kind == single && !isQuoted(text) {
		// Taken as written: YAML would read "#x" as nothing and "a: b" as
		// a mapping, which a token or a path may well hold.
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: text, Line: 1}, nil
	}
	root, err := src.Document([]byte(text), "a variable or flag holds one value")
	switch {
	case err != nil:
		return nil, err
	case root == nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: 1}, nil
	case s.kind == singles && root.Kind == yaml.ScalarNode:
		return splitCommas(root), nil
	}
	return root, nil
}

// isQuoted reports whether YAML quotes enclose all of text.
func isQuoted(text string) bool {
	return len(text) >= 2 && (text[0] == '"' || text[0] == '\'') && text[len(text)-1] == text[0]
}

// splitCommas reads a single value as a list of the values between its
// commas: a,b is [a, b]. No address holds a comma, so this is unambiguous.
func splitCommas(n *yaml.Node) *yaml.Node {
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: n.Line}
	for item := range strings.SplitSeq(n.Value, ",") {
		list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.TrimSpace(item), Line: n.Line})
	}
	return list
}

// nest wraps value in the mappings of the sections on its path:
// "pfcp.t1" gives {pfcp: {t1: value}}, which the file's decoder reads.
func nest(path string, value *yaml.Node) *yaml.Node {
	keys := strings.Split(path, ".")
	n := value
	for i := len(keys) - 1; i >= 0; i-- {
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: keys[i], Line: value.Line}
		n = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{key, n}, Line: value.Line}
	}
	return n
}

// relabel turns an error of the file's decoder, met in the value of a
// variable or flag, into one named after it: no line, and no key when it
// is the variable's own.
func relabel(err error, s *setting) error {
	var e *yamlfile.Error
	if !errors.As(err, &e) {
		return err
	}
	out := &yamlfile.Error{File: e.File, Key: keyWithin(e.Key, s.path), Msg: e.Msg}
	if e.Key == "" {
		// A syntax error: the file's hint speaks of lines and indentation.
		msg, _, _ := strings.Cut(e.Msg, "; check the indentation")
		out.Msg = msg + "; write it in YAML's flow style on one line, e.g. " + s.example()
	}
	return out
}

// parseArgs reads the flags at the start of args. Flags are written
// --name=value or --name value (one dash will do); values are as the file
// has them.
func parseArgs(args []string) (assignments, []string, error) {
	var cmd assignments
	given := map[string]string{} // setting path to the flag that set it
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return cmd, args[i+1:], nil
		}
		if len(arg) < 2 || arg[0] != '-' {
			return cmd, args[i:], nil
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
		flag := "--" + name
		if name == "h" || name == "help" {
			return cmd, nil, ErrHelp
		}
		if !hasValue {
			if i+1 == len(args) || strings.HasPrefix(args[i+1], "--") {
				return cmd, nil, flagError(flag, "needs a value, e.g. %s", flagExample(name))
			}
			i++
			value = args[i]
		}
		if name == "config" {
			switch {
			case value == "":
				return cmd, nil, flagError(flag, "empty; name a YAML file, e.g. --config /etc/upfd/upfd.yaml")
			case cmd.config != "":
				return cmd, nil, flagError(flag, "given twice; keep one")
			}
			cmd.config = value
			continue
		}
		s := settingOfFlag(flag)
		if s == nil {
			return cmd, nil, flagError(flag, "%s", unknownFlag(name))
		}
		if first, twice := given[s.path]; twice {
			also := ""
			if first != flag {
				also = ", also as " + first
			}
			return cmd, nil, flagError(flag, "given twice%s; keep one", also)
		}
		given[s.path] = flag
		cmd.assignments = append(cmd.assignments, assignment{setting: s, text: value, from: "flag " + flag})
	}
	return cmd, nil, nil
}

func flagError(flag, format string, args ...any) error {
	return &yamlfile.Error{File: "flag " + flag, Msg: fmt.Sprintf(format, args...)}
}

// settingOfFlag is the setting that flag sets, or nil.
func settingOfFlag(flag string) *setting {
	if flag == logLevelFlag {
		return settingAt("log.level")
	}
	return settingAt(strings.TrimPrefix(flag, "--"))
}

// flagExample shows the flag called name with its default, or with a
// file for --config.
func flagExample(name string) string {
	if s := settingOfFlag("--" + name); s != nil {
		return "--" + name + "=" + s.show(Default())
	}
	return "--config /etc/upfd/upfd.yaml"
}

func unknownFlag(name string) string {
	if slices.Contains(sections, name) {
		return fmt.Sprintf("%s is a section; set its keys one by one, e.g. --%s.%s", name, name, firstKeyOf(name))
	}
	names := []string{"config", strings.TrimPrefix(logLevelFlag, "--")}
	for _, s := range settings {
		names = append(names, s.path)
	}
	// Dashes for underscores is the likeliest slip: --max-sessions.
	if guess := yamlfile.Nearest(strings.ToLower(strings.ReplaceAll(name, "-", "_")), names); guess != "" {
		return fmt.Sprintf("no such flag; did you mean --%s? upfd --help lists them all", guess)
	}
	return "no such flag; upfd --help lists them all"
}

// firstKeyOf is the first key of a section.
func firstKeyOf(section string) string {
	for _, s := range settings {
		if rest, ok := strings.CutPrefix(s.path, section+"."); ok {
			return rest
		}
	}
	return ""
}

// parseEnv reads the UPFD_ variables of env, each "NAME=value". Of a name
// given twice, the last counts, as with exec.Cmd.
func parseEnv(env []string) (assignments, error) {
	values := map[string]string{}
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(name, envPrefix) {
			values[name] = value
		}
	}
	var vars assignments
	if path, ok := values[EnvConfig]; ok {
		if path == "" {
			return vars, envError(EnvConfig, "empty; name a YAML file, e.g. /etc/upfd/upfd.yaml, or unset it")
		}
		vars.config = path
		delete(values, EnvConfig)
	}
	for i := range settings {
		s := &settings[i]
		if value, ok := values[s.env()]; ok {
			vars.assignments = append(vars.assignments, assignment{setting: s, text: value, from: "env " + s.env()})
			delete(values, s.env())
		}
	}
	names := make([]string, 0, len(values))
	for name, value := range values {
		if !isServiceLink(name, value) {
			names = append(names, name)
		}
	}
	if len(names) > 0 {
		slices.Sort(names)
		return vars, envError(names[0], "%s", unknownEnv(names[0]))
	}
	return vars, nil
}

func envError(name, format string, args ...any) error {
	return &yamlfile.Error{File: "env " + name, Msg: fmt.Sprintf(format, args...)}
}

func unknownEnv(name string) string {
	for _, section := range sections {
		if name == envPrefix+strings.ToUpper(section) {
			return fmt.Sprintf("%s is a section; set its keys one by one, e.g. %s_%s", section, name, strings.ToUpper(firstKeyOf(section)))
		}
	}
	names := []string{EnvConfig}
	for i := range settings {
		names = append(names, settings[i].env())
	}
	if guess := yamlfile.Nearest(strings.ToUpper(strings.ReplaceAll(name, "-", "_")), names); guess != "" {
		return fmt.Sprintf("no such variable; did you mean %s? upfd --help lists them all", guess)
	}
	return "no such variable; upfd --help lists the UPFD_ variables upfd reads: rename or unset this one"
}

// serviceLink and portLink match the variables Kubernetes makes for a
// Service whose name starts with upfd; no key ends as they do.
var (
	serviceLink = regexp.MustCompile(`^UPFD(_[A-Z0-9_]+)?_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT_[0-9]+_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?)$`)
	portLink    = regexp.MustCompile(`^UPFD(_[A-Z0-9_]+)?_PORT$`)
)

// isServiceLink reports whether name=value is one of Kubernetes' service
// links. A bare _PORT must hold proto://address:port, so that a mistaken
// UPFD_API_PORT=9000 is still refused.
func isServiceLink(name, value string) bool {
	isURL := strings.HasPrefix(value, "tcp://") || strings.HasPrefix(value, "udp://") || strings.HasPrefix(value, "sctp://")
	return serviceLink.MatchString(name) || (portLink.MatchString(name) && isURL)
}

// Usage writes the flags and variables that set the configuration, with
// their defaults, for upfd --help.
func Usage(w io.Writer) {
	def := Default()
	fmt.Fprintf(w, "  --config FILE  (%s)\n        the YAML configuration file; without one, the defaults below\n", EnvConfig)
	for i := range settings {
		s := &settings[i]
		also := ""
		if s.path == "log.level" {
			also = "; or " + logLevelFlag
		}
		fmt.Fprintf(w, "  %s=%s  (%s%s)\n        %s\n", s.flag(), s.show(def), s.env(), also, s.usage)
	}
}
