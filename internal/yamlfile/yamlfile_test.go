package yamlfile

import (
	"testing"
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
