package yamlfile

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// read decodes text as a mapping of a count and a list of durations.
func read(t *testing.T, text string) error {
	t.Helper()
	src := NewSource("f.yaml")
	root, err := src.Document([]byte(text), "one")
	if err != nil {
		return err
	}
	d := &Decoder{Src: src}
	var count int
	return d.Mapping(root, "", "a test", []Field{
		{Key: "count", Set: Value(d, &count, "a number such as 3", ParseCount(Range{Min: 1, Max: 9}))},
		{Key: "waits", Set: func(n *yaml.Node, path string) error {
			_, err := List(d, n, path, "a list of durations", "a duration such as 2s", ParseDuration("2s"))
			return err
		}},
		{Key: "name", Set: Value(d, new(string), "a name", AsIs)},
	}, map[string]string{"size": "other tests"})
}

func TestDecoderErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"- a\n", "f.yaml:1: got a list; want a test with keys such as count and waits"},
		{"cuont: 3\n", "f.yaml:1: cuont: unknown key; did you mean count? a test takes count, waits or name"},
		{"colour: red\n", "f.yaml:1: colour: unknown key; a test takes count, waits or name"},
		{"size: 3\n", "f.yaml:1: size: a key of other tests, not here; a test takes count, waits or name"},
		{"\"a.b\": 1\n", `f.yaml:1: "a.b": unknown key; a test takes count, waits or name`},
		{"count: 3\ncount: 4\n", "f.yaml:2: count: set twice (first on line 1); keep one"},
		{"<<: {count: 1}\n", "f.yaml:1: <<: merge keys are not supported; write the keys out in full"},
		{"[a]: 1\n", "f.yaml:1: a key is a list; keys are plain names: count, waits or name"},
		{"count: [3]\n", "f.yaml:1: count: got a list; want a number such as 3"},
		{"count: 10\n", `f.yaml:1: count: "10" is out of range; want 1 to 9`},
		{"waits: 2s\n", "f.yaml:1: waits: got a single value; want a list of durations"},
		{"waits:\n  - 2s\n  - 3\n", `f.yaml:3: waits[1]: "3" has no unit; write it with one, e.g. 3s or 3ms`},
		{"name: &a x\ncount: *a\n", "f.yaml:2: count: aliases are not supported; write the value out in full"},
	} {
		if err := read(t, tc.text); err == nil || err.Error() != tc.want {
			t.Errorf("%q:\ngot  %v\nwant %s", tc.text, err, tc.want)
		}
	}
	if err := read(t, "count: 3\nwaits: [1s, 2m]\n"); err != nil {
		t.Error(err)
	}
}
