package config

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// decode reads data over c, which holds the defaults, and records in src
// the line of every key and list item it meets.
func decode(c *Config, src *source, data []byte) error {
	root, err := src.Document(data, "upfd reads one")
	if err != nil || root == nil {
		return err
	}
	d := &decoder{src: src}
	return d.config(root, c)
}

// decoder walks the YAML tree over a Config. It stops at the first problem,
// so problems come in file order.
type decoder struct {
	src *source
}

func (d *decoder) fail(line int, path, format string, args ...any) error {
	return d.src.Errorf(line, path, format, args...)
}

// want checks that n, found at path, is of the given kind; shape says what
// the user should write instead.
func (d *decoder) want(n *yaml.Node, kind yaml.Kind, path, shape string) error {
	line := d.src.Line(path)
	if n.Kind == yaml.AliasNode {
		// Aliases may point at their own ancestors; refusing them keeps
		// the walk finite and the file readable.
		return d.fail(line, path, "aliases are not supported; write the value out in full")
	}
	if n.Kind != kind {
		return d.fail(line, path, "got %s; want %s", yamlfile.KindName(n), shape)
	}
	return nil
}

// eachKey runs set on each key of the mapping n at path, in file order. Null
// counts as an empty mapping. It refuses other kinds, merge keys, repeated
// keys and keys not in known.
func (d *decoder) eachKey(n *yaml.Node, path, shape string, known []string,
	set func(key string, value *yaml.Node, path string) error) error {
	if yamlfile.IsNull(n) {
		return nil
	}
	if err := d.want(n, yaml.MappingNode, path, shape); err != nil {
		return err
	}
	unknown := func(key string) (string, string) {
		return printable(key), "unknown key; want " + yamlfile.OrList(known)
	}
	return d.src.EachKey(n, path, known, unknown, set)
}

// eachItem runs each on every item of the list n at path. Null counts as an
// empty list.
func (d *decoder) eachItem(n *yaml.Node, path, shape string, each func(item *yaml.Node, path string) error) error {
	if yamlfile.IsNull(n) {
		return nil
	}
	if err := d.want(n, yaml.SequenceNode, path, shape); err != nil {
		return err
	}
	return d.src.EachItem(n, path, each)
}

// scalar returns the text of the single value n at path; null is "".
func (d *decoder) scalar(n *yaml.Node, path, shape string) (string, error) {
	if err := d.want(n, yaml.ScalarNode, path, shape); err != nil {
		return "", err
	}
	if yamlfile.IsNull(n) {
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
		return zero, d.fail(d.src.Line(path), path, "%v", err)
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
	d.src.Lines[""] = root.Line
	known := []string{"node_id", "pfcp", "gtpu", "interfaces", "dnns", "teid_range", "max_sessions", "max_pdrs_per_session",
		"gbr_capacity", "buffer", "xdp_mode", "pin_path", "state_file", "state_fsync", "api", "metrics", "log"}
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
			case "max_pdrs_per_session":
				c.MaxPDRsPerSession, err = scalarAs(d, value, path, "a number such as 32", parseCount(pdrsRange, "32"))
			case "gbr_capacity":
				err = d.gbrCapacity(value, path, &c.GBRCapacity)
			case "buffer":
				err = d.buffer(value, path, &c.Buffer)
			case "xdp_mode":
				c.XDPMode, err = d.scalar(value, path, "native, generic or auto")
			case "pin_path":
				c.PinPath, err = d.scalar(value, path, "a directory such as /sys/fs/bpf/upfd")
			case "state_file":
				c.StateFile, err = d.scalar(value, path, "a file such as /var/lib/upfd/state.journal")
			case "state_fsync":
				c.StateFsync, err = scalarAs(d, value, path, "true or false", yamlfile.ParseBool)
			case "api":
				err = d.api(value, path, &c.API)
			case "metrics":
				err = d.metrics(value, path, &c.Metrics)
			case "log":
				err = d.log(value, path, &c.Log)
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
				p.Peers, err = listOf(d, value, sub, "a list of addresses or networks such as [198.18.4.1]",
					"an address such as 198.18.4.1 or a network such as 198.18.4.0/24", parsePeer)
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

func (d *decoder) gbrCapacity(n *yaml.Node, path string, g *GBRCapacity) error {
	return d.eachKey(n, path, "a mapping with keys uplink and downlink", []string{"uplink", "downlink"},
		func(key string, value *yaml.Node, sub string) error {
			var err error
			switch key {
			case "uplink":
				g.Uplink, err = scalarAs(d, value, sub, "a bit rate such as 10Gbit/s", parseBitRate)
			case "downlink":
				g.Downlink, err = scalarAs(d, value, sub, "a bit rate such as 10Gbit/s", parseBitRate)
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

func (d *decoder) api(n *yaml.Node, path string, a *API) error {
	return d.eachKey(n, path, "a mapping with keys listen and token", []string{"listen", "token"},
		func(key string, value *yaml.Node, sub string) error {
			var err error
			switch key {
			case "listen":
				a.Listen, err = scalarAs(d, value, sub, "an address and port such as 127.0.0.1:8080", parseServerListen(DefaultAPIPort))
			case "token":
				// Never quoted back in an error: it is a secret.
				a.Token, err = d.scalar(value, sub, "a token such as one from openssl rand -hex 32")
			}
			return err
		})
}

func (d *decoder) metrics(n *yaml.Node, path string, m *Metrics) error {
	return d.eachKey(n, path, "a mapping with the key listen", []string{"listen"},
		func(key string, value *yaml.Node, sub string) error {
			var err error
			m.Listen, err = scalarAs(d, value, sub, "an address and port such as 127.0.0.1:9090", parseServerListen(DefaultMetricsPort))
			return err
		})
}

func (d *decoder) log(n *yaml.Node, path string, l *Log) error {
	return d.eachKey(n, path, "a mapping with keys level and format", []string{"level", "format"},
		func(key string, value *yaml.Node, sub string) error {
			var err error
			switch key {
			case "level":
				l.Level, err = d.scalar(value, sub, "debug, info, warn or error")
			case "format":
				l.Format, err = d.scalar(value, sub, "text or json")
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
	err := d.eachKey(n, path, "a mapping with keys name, role and address", []string{"name", "role", "address", "mtu"},
		func(key string, value *yaml.Node, sub string) error {
			var err error
			switch key {
			case "name":
				iface.Name, err = d.scalar(value, sub, "a device name such as eth1")
			case "role":
				iface.Role, err = d.scalar(value, sub, "n3, n6 or n9")
			case "address":
				iface.Address, err = scalarAs(d, value, sub, "an address such as 198.18.3.2", parseGTPUAddress)
			case "mtu":
				iface.MTU, err = scalarAs(d, value, sub, "a number such as 1500", parseCount(mtuRange, "1500"))
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

// printable shows a key as written when that is safe on one line, quoted
// otherwise.
func printable(key string) string {
	quoted := yamlfile.Quote(key)
	if key == "" || quoted[1:len(quoted)-1] != key || strings.ContainsAny(key, " .[]") {
		return quoted
	}
	return key
}
