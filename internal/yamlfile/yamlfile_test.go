package yamlfile

import (
	"testing"

	"gopkg.in/yaml.v3"
)

func TestDocument(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"a: 1\n---\nb: 2\n", `f.yaml:3: a second YAML document starts here; x reads one, so remove the "---" above it`},
		{"a: [1,\n", "f.yaml:1: invalid YAML: did not find expected node content; check the indentation, colons and quotes on this line and the one before"},
		{"a: 1\nb: *x\n", "f.yaml:2: invalid YAML: unknown anchor 'x' referenced; aliases are not supported; write the value out in full"},
		{"a: 1\nb: \x01\n", "f.yaml:2: invalid YAML: control characters are not allowed; save the file as UTF-8 text without control characters"},
	} {
		_, err := NewSource("f.yaml").Document([]byte(tc.text), "x reads one")
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v; want %s", tc.text, err, tc.want)
		}
	}
	for _, text := range []string{"", "# only a comment\n", "~\n", "---\n...\n", "a: 1\n---\n"} {
		root, err := NewSource("f.yaml").Document([]byte(text), "x reads one")
		if err != nil || (root == nil) != (text != "a: 1\n---\n") {
			t.Errorf("%q: got %v, %v", text, root, err)
		}
	}
}

func TestEachKey(t *testing.T) {
	unknown := func(key string) (string, string) { return key, "unknown key" }
	for _, tc := range []struct{ text, want string }{
		{"a: 1\nb: 2\n", ""},
		{"a: 1\nc: 2\n", "f.yaml:2: m.c: unknown key"},
		{"a: 1\na: 2\n", "f.yaml:2: m.a: set twice (first on line 1); keep one"},
		{"<<: {a: 1}\n", "f.yaml:1: m.<<: merge keys are not supported; write the keys out in full"},
		{"[a]: 1\n", "f.yaml:1: m: a key is a list; keys are plain names: a or b"},
	} {
		src := NewSource("f.yaml")
		root, err := src.Document([]byte(tc.text), "x reads one")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		err = src.EachKey(root, "m", []string{"a", "b"}, unknown, func(key string, _ *yaml.Node, path string) error {
			got = append(got, path)
			return nil
		})
		if msg := ""; err != nil {
			if msg = err.Error(); msg != tc.want {
				t.Errorf("%q: got %s; want %s", tc.text, msg, tc.want)
			}
		} else if tc.want != "" || len(got) != 2 || src.Line("m.b") != 2 {
			t.Errorf("%q: got %v, lines %v; want %s", tc.text, got, src.Lines, tc.want)
		}
	}
}

func TestError(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "f", Line: 3, Key: "a.b", Msg: "m"}, "f:3: a.b: m"},
		{Error{File: "f", Key: "a", Msg: "m"}, "f: a: m"},
		{Error{Msg: "m"}, "m"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got %q; want %q", got, tc.want)
		}
	}
}
