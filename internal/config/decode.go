package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// decode reads data over c, which holds the defaults, and records in c.src
// the line of every key and list item it meets.
func decode(c *Config, data []byte) error {
	root, err := parseYAML(c.src.file, data)
	if err != nil || root == nil {
		return err
	}
	d := &decoder{src: c.src}
	return d.config(root, c)
}

// parseYAML returns the content of the file's one document, or nil if the
// file holds only comments or null.
func parseYAML(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(file, data, err)
	}
	if err := refuseMoreDocuments(file, data, dec); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, nil
	}
	return doc.Content[0], nil
}

// refuseMoreDocuments reads what follows the first document: keys after a
// stray "---" would otherwise be silently ignored. Empty documents pass.
func refuseMoreDocuments(file string, data []byte, dec *yaml.Decoder) error {
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return syntaxError(file, data, err)
		case len(doc.Content) > 0 && !isNull(doc.Content[0]):
			msg := "a second YAML document starts here; upfd reads one, so remove the \"---\" above it"
			return problem{line: doc.Content[0].Line, msg: msg}.err(file)
		}
	}
}

// syntaxError turns a yaml.v3 error ("yaml: line 3: ...") into ours, finding
// the line where yaml.v3 leaves it out.
func syntaxError(file string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		number, after, found := strings.Cut(rest, ": ")
		if n, convErr := strconv.Atoi(number); found && convErr == nil {
			line, msg = n, after
		}
	}
	hint := "check the indentation, colons and quotes on this line and the one before"
	switch {
	case line > 0:
	case strings.HasPrefix(msg, "unknown anchor"):
		line = lineOfAlias(data, msg)
		hint = "aliases are not supported; write the value out in full"
	case strings.Contains(msg, "max depth"):
		line = 1
		hint = "nest fewer lists and mappings"
	case isEncodingProblem(msg):
		line = lineOfBadChar(data)
		hint = "save the file as UTF-8 text without control characters"
	default:
		// yaml.v3 omits "line 1" (it counts from 0 and prints non-zero lines).
		line = 1
	}
	msg = strings.Join(strings.Fields(msg), " ") // one line, whatever yaml.v3 quoted
	return problem{line: line, msg: "invalid YAML: " + msg + "; " + hint}.err(file)
}

func isEncodingProblem(msg string) bool {
	return strings.Contains(msg, "control characters") || strings.Contains(msg, "UTF-") ||
		strings.Contains(msg, "Unicode") || strings.Contains(msg, "surrogate")
}

// lineOfAlias finds the alias named in "unknown anchor 'x' referenced".
func lineOfAlias(data []byte, msg string) int {
	_, rest, _ := strings.Cut(msg, "'")
	name, _, _ := strings.Cut(rest, "'")
	at := bytes.Index(data, []byte("*"+name))
	if name == "" || at < 0 {
		return 0
	}
	return 1 + bytes.Count(data[:at], []byte("\n"))
}

// lineOfBadChar finds the first byte YAML does not allow: invalid UTF-8 or a
// character outside YAML's printable set.
func lineOfBadChar(data []byte) int {
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if (r == utf8.RuneError && size == 1) || !yamlPrintable(r) {
			return line
		}
		if r == '\n' {
			line++
		}
		i += size
	}
	return 0
}

// yamlPrintable is YAML 1.2's c-printable set.
func yamlPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		return true
	case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd:
		return true
	default:
		return r >= 0x10000 && r <= 0x10ffff
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// kindName says what a node is in the user's words.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	default:
		return "a single value"
	}
}

// decoder walks the YAML tree over a Config. It stops at the first problem,
// so problems come in file order.
type decoder struct {
	src *source
}

func (d *decoder) fail(line int, path, format string, args ...any) error {
	return problem{line: line, path: path, msg: fmt.Sprintf(format, args...)}.err(d.src.file)
}

// want checks that n, found at path, is of the given kind; shape says what
// the user should write instead.
func (d *decoder) want(n *yaml.Node, kind yaml.Kind, path, shape string) error {
	line := d.src.line(path)
	if n.Kind == yaml.AliasNode {
		// Aliases may point at their own ancestors; refusing them keeps
		// the walk finite and the file readable.
		return d.fail(line, path, "aliases are not supported; write the value out in full")
	}
	if n.Kind != kind {
		return d.fail(line, path, "got %s; want %s", kindName(n), shape)
	}
	return nil
}

// eachKey runs set on each key of the mapping n at path, in file order. Null
// counts as an empty mapping. It refuses other kinds, merge keys, repeated
// keys and keys not in known.
func (d *decoder) eachKey(n *yaml.Node, path, shape string, known []string,
	set func(key string, value *yaml.Node, path string) error) error {
	if isNull(n) {
		return nil
	}
	if err := d.want(n, yaml.MappingNode, path, shape); err != nil {
		return err
	}
	firstLine := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		if err := d.checkKey(key, path, known, firstLine); err != nil {
			return err
		}
		sub := keyPath(path, key.Value)
		firstLine[key.Value] = key.Line
		d.src.lines[sub] = key.Line
		if err := set(key.Value, value, sub); err != nil {
			return err
		}
	}
	return nil
}

// checkKey refuses a key of the mapping at path that is not a plain,
// known, first use of its name.
func (d *decoder) checkKey(key *yaml.Node, path string, known []string, firstLine map[string]int) error {
	where := key.Line
	want := orList(known)
	switch {
	case key.Kind != yaml.ScalarNode:
		return d.fail(where, path, "a key is %s; keys are plain names: %s", kindName(key), want)
	case key.ShortTag() == "!!merge":
		return d.fail(where, keyPath(path, "<<"), "merge keys are not supported; write the keys out in full")
	case !slices.Contains(known, key.Value):
		return d.fail(where, keyPath(path, printable(key.Value)), "unknown key; want %s", want)
	}
	if first, seen := firstLine[key.Value]; seen {
		return d.fail(where, keyPath(path, key.Value), "set twice (first on line %d); keep one", first)
	}
	return nil
}

// eachItem runs each on every item of the list n at path. Null counts as an
// empty list.
func (d *decoder) eachItem(n *yaml.Node, path, shape string, each func(item *yaml.Node, path string) error) error {
	if isNull(n) {
		return nil
	}
	if err := d.want(n, yaml.SequenceNode, path, shape); err != nil {
		return err
	}
	for i, item := range n.Content {
		sub := itemPath(path, i)
		d.src.lines[sub] = item.Line
		if err := each(item, sub); err != nil {
			return err
		}
	}
	return nil
}

// scalar returns the text of the single value n at path; null is "".
func (d *decoder) scalar(n *yaml.Node, path, shape string) (string, error) {
	if err := d.want(n, yaml.ScalarNode, path, shape); err != nil {
		return "", err
	}
	if isNull(n) {
		return "", nil
	}
	return n.Value, nil
}

// scalarAs decodes the single value n at path with parse, whose errors
// explain themselves.
func scalarAs[T any](d *decoder, n *yaml.Node, path, shape string, parse func(string) (T, error)) (T, error) {
	var zero T
	text, err := d.scalar(n, path, shape)
	if err != nil {
		return zero, err
	}
	value, err := parse(text)
	if err != nil {
		return zero, d.fail(d.src.line(path), path, "%v", err)
	}
	return value, nil
}

// listOf decodes the list of single values n at path with parse.
func listOf[T any](d *decoder, n *yaml.Node, path, shape, itemShape string, parse func(string) (T, error)) ([]T, error) {
	list := []T{}
	err := d.eachItem(n, path, shape, func(item *yaml.Node, sub string) error {
		value, err := scalarAs(d, item, sub, itemShape, parse)
		list = append(list, value)
		return err
	})
	return list, err
}

func (d *decoder) config(root *yaml.Node, c *Config) error {
	d.src.lines[""] = root.Line
	known := []string{"node_id", "pfcp", "gtpu", "interfaces", "dnns", "teid_range", "max_sessions", "buffer", "xdp_mode", "pin_path"}
	return d.eachKey(root, "", "keys such as node_id: and pfcp:", known,
		func(key string, value *yaml.Node, path string) error {
			var err error
			switch key {
			case "node_id":
				c.NodeID, err = d.scalar(value, path, "an address or FQDN such as 198.18.4.2")
			case "pfcp":
				err = d.pfcp(value, path, &c.PFCP)
			case "gtpu":
				err = d.gtpu(value, path, &c.GTPU)
			case "interfaces":
				c.Interfaces, err = d.interfaces(value, path)
			case "dnns":
				c.DNNs, err = d.dnns(value, path)
			case "teid_range":
				c.TEIDRange, err = scalarAs(d, value, path, "a range such as 0x100-0xffffff", parseTEIDRange)
			case "max_sessions":
				c.MaxSessions, err = scalarAs(d, value, path, "a number such as 100000", parseCount(sessionsRange, "100000"))
			case "buffer":
				err = d.buffer(value, path, &c.Buffer)
			case "xdp_mode":
				c.XDPMode, err = d.scalar(value, path, "native or generic")
			case "pin_path":
				c.PinPath, err = d.scalar(value, path, "a directory such as /sys/fs/bpf/upfd")
			}
			return err
		})
}

func (d *decoder) pfcp(n *yaml.Node, path string, p *PFCP) error {
	known := []string{"listen", "peers", "associate", "heartbeat_interval", "heartbeat_retries", "t1", "n1", "peer_grace"}
	return d.eachKey(n, path, "a mapping with keys such as listen and peers", known,
		func(key string, value *yaml.Node, sub string) error {
			var err error
			switch key {
			case "listen":
				p.Listen, err = scalarAs(d, value, sub, "an address and port such as 198.18.4.2:8805", parseListen)
			case "peers":
				p.Peers, err = listOf(d, value, sub, "a list of addresses such as [198.18.4.1]",
					"an address such as 198.18.4.1", parsePeer)
			case "associate":
				p.Associate, err = listOf(d, value, sub, "a list of addresses such as [198.18.4.1]",
					"an address such as 198.18.4.1 or 198.18.4.1:8805", parseSMF)
			case "heartbeat_interval":
				p.HeartbeatInterval, err = scalarAs(d, value, sub, "a duration such as 10s", parseDuration("10s"))
			case "heartbeat_retries":
				p.HeartbeatRetries, err = scalarAs(d, value, sub, "a number such as 3", parseCount(sendsRange, "3"))
			case "t1":
				p.T1, err = scalarAs(d, value, sub, "a duration such as 3s", parseDuration("3s"))
			case "n1":
				p.N1, err = scalarAs(d, value, sub, "a number such as 3", parseCount(sendsRange, "3"))
			case "peer_grace":
				p.PeerGrace, err = scalarAs(d, value, sub, "a duration such as 60s", parseDuration("60s"))
			}
			return err
		})
}

func (d *decoder) gtpu(n *yaml.Node, path string, g *GTPU) error {
	return d.eachKey(n, path, "a mapping with keys echo_interval and echo_retries", []string{"echo_interval", "echo_retries"},
		func(key string, value *yaml.Node, sub string) error {
			var err error
			switch key {
			case "echo_interval":
				g.EchoInterval, err = scalarAs(d, value, sub, "a duration such as 60s", parseDuration("60s"))
			case "echo_retries":
				g.EchoRetries, err = scalarAs(d, value, sub, "a number such as 3", parseCount(sendsRange, "3"))
			}
			return err
		})
}

func (d *decoder) buffer(n *yaml.Node, path string, b *Buffer) error {
	return d.eachKey(n, path, "a mapping with keys packets_per_session and total_packets",
		[]string{"packets_per_session", "total_packets"},
		func(key string, value *yaml.Node, sub string) error {
			var err error
			switch key {
			case "packets_per_session":
				b.PacketsPerSession, err = scalarAs(d, value, sub, "a number such as 64", parseCount(perSessionRange, "64"))
			case "total_packets":
				b.TotalPackets, err = scalarAs(d, value, sub, "a number such as 65536", parseCount(totalRange, "65536"))
			}
			return err
		})
}

func (d *decoder) interfaces(n *yaml.Node, path string) ([]Interface, error) {
	list := []Interface{}
	err := d.eachItem(n, path, "a list of interfaces, each with name, role and address",
		func(item *yaml.Node, sub string) error {
			iface, err := d.iface(item, sub)
			list = append(list, iface)
			return err
		})
	return list, err
}

func (d *decoder) iface(n *yaml.Node, path string) (Interface, error) {
	var iface Interface
	err := d.eachKey(n, path, "a mapping with keys name, role and address", []string{"name", "role", "address"},
		func(key string, value *yaml.Node, sub string) error {
			var err error
			switch key {
			case "name":
				iface.Name, err = d.scalar(value, sub, "a device name such as eth1")
			case "role":
				iface.Role, err = d.scalar(value, sub, "n3, n6 or n9")
			case "address":
				iface.Address, err = scalarAs(d, value, sub, "an address such as 198.18.3.2", parseGTPUAddress)
			}
			return err
		})
	return iface, err
}

func (d *decoder) dnns(n *yaml.Node, path string) ([]DNN, error) {
	list := []DNN{}
	err := d.eachItem(n, path, "a list of DNNs, each with name and pools",
		func(item *yaml.Node, sub string) error {
			dnn, err := d.dnn(item, sub)
			list = append(list, dnn)
			return err
		})
	return list, err
}

func (d *decoder) dnn(n *yaml.Node, path string) (DNN, error) {
	var dnn DNN
	err := d.eachKey(n, path, "a mapping with keys name and pools", []string{"name", "pools"},
		func(key string, value *yaml.Node, sub string) error {
			var err error
			switch key {
			case "name":
				dnn.Name, err = d.scalar(value, sub, "a DNN name such as internet")
			case "pools":
				dnn.Pools, err = listOf(d, value, sub, "a list of prefixes such as [10.45.0.0/16]",
					"a prefix such as 10.45.0.0/16", parsePool)
			}
			return err
		})
	return dnn, err
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// printable shows a key as written when that is safe on one line, quoted
// otherwise.
func printable(key string) string {
	quoted := quote(key)
	if key == "" || quoted[1:len(quoted)-1] != key || strings.ContainsAny(key, " .[]") {
		return quoted
	}
	return key
}
