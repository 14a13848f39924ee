package yamlfile

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Decoder walks the YAML tree of one file, recording in Src the line of
// every key and item it meets. It stops at the first problem, so problems
// come in file order.
type Decoder struct {
	Src *Source
}

// Fail is a problem at line with the key at path.
func (d *Decoder) Fail(line int, path, format string, args ...any) error {
	return d.Src.Errorf(line, path, format, args...)
}

// Want checks that n, at path, is of kind; shape says what to write.
func (d *Decoder) Want(n *yaml.Node, kind yaml.Kind, path, shape string) error {
	switch {
	case n.Kind == yaml.AliasNode:
		// An alias may point at its own ancestor; refusing them keeps the
		// walk finite and the file readable.
		return d.Fail(n.Line, path, "aliases are not supported; write the value out in full")
	case n.Kind != kind:
		return d.Fail(n.Line, path, "got %s; want %s", KindName(n), shape)
	}
	return nil
}

// A Field is a key of a mapping and how to read its value at its path.
type Field struct {
	Key string
	Set func(n *yaml.Node, path string) error
}

// Mapping reads the mapping n at path field by field, in file order. Null
// is an empty mapping. It refuses other kinds, merge keys, repeated keys
// and keys not in fields, suggesting the key likely meant; what names the
// mapping in the hints ("pfcp", "a ping step"), and others are keys that
// belong to other mappings, to say whose they are.
func (d *Decoder) Mapping(n *yaml.Node, path, what string, fields []Field, others map[string]string) error {
	if IsNull(n) {
		return nil
	}
	known := make([]string, len(fields))
	for i, f := range fields {
		known[i] = f.Key
	}
	if err := d.Want(n, yaml.MappingNode, path, mappingShape(what, known)); err != nil {
		return err
	}
	firstLine := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		switch {
		case key.Kind != yaml.ScalarNode:
			return d.Fail(key.Line, path, "a key is %s; keys are plain names: %s", KindName(key), OrList(known))
		case key.ShortTag() == "!!merge":
			return d.Fail(key.Line, KeyPath(path, "<<"), "merge keys are not supported; write the keys out in full")
		case !slices.Contains(known, key.Value):
			return d.Fail(key.Line, KeyPath(path, ShowKey(key.Value)), "%s", unknownKey(key.Value, what, known, others))
		}
		if first, seen := firstLine[key.Value]; seen {
			return d.Fail(key.Line, KeyPath(path, key.Value), "set twice (first on line %d); keep one", first)
		}
		sub := KeyPath(path, key.Value)
		firstLine[key.Value] = key.Line
		d.Src.Lines[sub] = key.Line
		if err := fields[slices.Index(known, key.Value)].Set(value, sub); err != nil {
			return err
		}
	}
	return nil
}

// mappingShape says what a mapping of the keys known looks like: "pfcp
// with keys such as listen and peers".
func mappingShape(what string, known []string) string {
	switch len(known) {
	case 0:
		return what
	case 1:
		return what + " with the key " + known[0]
	case 2:
		return what + " with keys " + known[0] + " and " + known[1]
	}
	return what + " with keys such as " + known[0] + " and " + known[1]
}

// unknownKey says what is wrong with key and what the mapping takes.
func unknownKey(key, what string, known []string, others map[string]string) string {
	takes := fmt.Sprintf("%s takes %s", what, OrList(known))
	if owner, ok := others[key]; ok {
		return fmt.Sprintf("a key of %s, not here; %s", owner, takes)
	}
	if near := Nearest(strings.ToLower(key), known); near != "" {
		return fmt.Sprintf("unknown key; did you mean %s? %s", near, takes)
	}
	return "unknown key; " + takes
}

// Nearest is the word of words nearest to word, at most two edits away and
// nearer than word is long, or "": what a mistyped name likely meant.
func Nearest(word string, words []string) string {
	best, bestDistance := "", 3
	for _, w := range words {
		if dist := EditDistance(word, w); dist < bestDistance && dist < len(word) {
			best, bestDistance = w, dist
		}
	}
	return best
}

// ShowKey shows a key as written when that is safe on one line, quoted
// otherwise.
func ShowKey(key string) string {
	quoted := Quote(key)
	if key == "" || quoted[1:len(quoted)-1] != key || strings.ContainsAny(key, " .[]") {
		return quoted
	}
	return key
}

// Each reads every item of the list n at path. Null is an empty list.
func (d *Decoder) Each(n *yaml.Node, path, shape string, read func(item *yaml.Node, path string) error) error {
	if IsNull(n) {
		return nil
	}
	if err := d.Want(n, yaml.SequenceNode, path, shape); err != nil {
		return err
	}
	return d.Src.EachItem(n, path, read)
}

// ScalarAs reads the single value n at path with parse, whose errors
// explain themselves. Null reads as "".
func ScalarAs[T any](d *Decoder, n *yaml.Node, path, shape string, parse func(string) (T, error)) (T, error) {
	var zero T
	if err := d.Want(n, yaml.ScalarNode, path, shape); err != nil {
		return zero, err
	}
	text := n.Value
	if IsNull(n) {
		text = ""
	}
	v, err := parse(text)
	if err != nil {
		return zero, d.Fail(n.Line, path, "%v", err)
	}
	return v, nil
}

// Value is a field's Set that reads one value into dst.
func Value[T any](d *Decoder, dst *T, shape string, parse func(string) (T, error)) func(*yaml.Node, string) error {
	return func(n *yaml.Node, path string) error {
		v, err := ScalarAs(d, n, path, shape, parse)
		if err == nil {
			*dst = v
		}
		return err
	}
}

// List reads the list of single values n at path, each with parse; shape
// is what the list looks like, itemShape what one item does.
func List[T any](d *Decoder, n *yaml.Node, path, shape, itemShape string, parse func(string) (T, error)) ([]T, error) {
	list := []T{}
	err := d.Each(n, path, shape, func(item *yaml.Node, sub string) error {
		v, err := ScalarAs(d, item, sub, itemShape, parse)
		list = append(list, v)
		return err
	})
	return list, err
}

// AsIs is the parser of a value taken as written.
func AsIs(s string) (string, error) { return s, nil }
