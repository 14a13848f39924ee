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
	d := &decoder{Src: src}
	return config(d, root, c)
}

// decoder walks the YAML tree over a Config with yamlfile's kit. It stops
// at the first problem, so problems come in file order.
type decoder = yamlfile.Decoder

// config reads the mapping root: the keys of settings, and the sections
// that hold them.
func config(d *decoder, root *yaml.Node, c *Config) error {
	d.Src.Lines[""] = root.Line
	return section(d, root, "", c)
}

// section reads the mapping n at path ("" for the whole file): each
// setting below path, and each section below it. Settings and sections
// come in the order of settings, which the hints follow.
func section(d *decoder, n *yaml.Node, path string, c *Config) error {
	var fields []yamlfile.Field
	for i := range settings {
		s := &settings[i]
		key, nested := childOf(path, s.path)
		switch {
		case key == "" || (len(fields) > 0 && fields[len(fields)-1].Key == key):
		case nested:
			fields = append(fields, yamlfile.Field{Key: key, Set: func(n *yaml.Node, sub string) error { return section(d, n, sub, c) }})
		default:
			fields = append(fields, yamlfile.Field{Key: key, Set: func(n *yaml.Node, sub string) error { return s.read(d, n, sub, c) }})
		}
	}
	what := path
	if path == "" {
		what = "upfd's config"
	}
	return d.Mapping(n, path, what, fields, nil)
}

// childOf is the key below path that leads to the setting at full, and
// whether more keys follow it; "" if full is not below path.
func childOf(path, full string) (key string, nested bool) {
	rest := full
	if path != "" {
		var below bool
		if rest, below = strings.CutPrefix(full, path+"."); !below {
			return "", false
		}
	}
	key, _, nested = strings.Cut(rest, ".")
	return key, nested
}

// interfaces reads the list of interfaces n at path.
func interfaces(d *decoder, n *yaml.Node, path string, list *[]Interface) error {
	*list = []Interface{}
	return d.Each(n, path, "a list of interfaces, each with name, role and address", func(item *yaml.Node, sub string) error {
		var iface Interface
		err := d.Mapping(item, sub, "an interface", []yamlfile.Field{
			{Key: "name", Set: yamlfile.Value(d, &iface.Name, "a device name such as eth1", yamlfile.AsIs)},
			{Key: "role", Set: yamlfile.Value(d, &iface.Role, "n3, n6 or n9", yamlfile.AsIs)},
			{Key: "address", Set: yamlfile.Value(d, &iface.Address, "an address such as 198.18.3.2", parseGTPUAddress)},
			{Key: "mtu", Set: yamlfile.Value(d, &iface.MTU, "a number such as 1500", parseMTU)},
		}, nil)
		*list = append(*list, iface)
		return err
	})
}

// dnns reads the list of DNNs n at path.
func dnns(d *decoder, n *yaml.Node, path string, list *[]DNN) error {
	*list = []DNN{}
	return d.Each(n, path, "a list of DNNs, each with name and pools", func(item *yaml.Node, sub string) error {
		var dnn DNN
		err := d.Mapping(item, sub, "a dnn", []yamlfile.Field{
			{Key: "name", Set: yamlfile.Value(d, &dnn.Name, "a DNN name such as internet", yamlfile.AsIs)},
			{Key: "pools", Set: func(n *yaml.Node, path string) (err error) {
				dnn.Pools, err = yamlfile.List(d, n, path, "a list of prefixes such as [10.45.0.0/16]", "a prefix such as 10.45.0.0/16", parsePool)
				return err
			}},
		}, nil)
		*list = append(*list, dnn)
		return err
	})
}
