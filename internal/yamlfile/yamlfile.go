// Package yamlfile reads a YAML file that a person wrote, keeping track of
// where each key and item is so that a problem can be reported as
// "file:line: key: what is wrong; what to write instead".
//
// It holds what upfd's config reader and the lab's scenario reader share:
// reading the file's one document, the line of every key path, the walk
// over its mappings and lists (Decoder), and the parsers of the values both
// take (numbers, counts, durations, bit rates, booleans), so that the two
// read a value alike and word its problems alike.
package yamlfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Error is a problem found in a file.
type Error struct {
	File string
	Line int    // 1-based; 0 when the problem is with a default
	Key  string // key path, e.g. "steps[2].rate"; "" for a syntax error
	Msg  string // what is wrong and what to write instead
}

// Error formats the problem as "file:line: key: msg", leaving out what is
// unknown: the line of a default, the file of a value built in code.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ReadFile reads the file at path. Its error starts "read path: ", and
// leaves out the path that the error of os.ReadFile repeats.
func ReadFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// Earliest returns the problem earliest in the file, or nil if there is
// none; problems with defaults (line 0) come after, in the order given.
func Earliest(problems []*Error) error {
	if len(problems) == 0 {
		return nil
	}
	best := problems[0]
	for _, p := range problems[1:] {
		if p.Line > 0 && (best.Line == 0 || p.Line < best.Line) {
			best = p
		}
	}
	return best
}

// Source remembers where a parsed value came from.
type Source struct {
	File  string
	Lines map[string]int // key path, e.g. "interfaces[1].role", to its 1-based line
}

// NewSource is the Source of the file called file, with no lines yet.
func NewSource(file string) *Source {
	return &Source{File: file, Lines: map[string]int{}}
}

// Line is where path is in the file, or 0 if the file does not set it.
func (s *Source) Line(path string) int {
	if s == nil {
		return 0
	}
	return s.Lines[path]
}

// Has reports whether the file sets path.
func (s *Source) Has(path string) bool { return s.Line(path) != 0 }

// Name is the file's name, or "" for a value built in code.
func (s *Source) Name() string {
	if s == nil {
		return ""
	}
	return s.File
}

// Errorf is a problem at line with the key at path.
func (s *Source) Errorf(line int, path, format string, args ...any) error {
	return &Error{File: s.Name(), Line: line, Key: path, Msg: fmt.Sprintf(format, args...)}
}

// Item records the line of item, number i of the list at path, and
// returns its path.
func (s *Source) Item(path string, i int, item *yaml.Node) string {
	sub := ItemPath(path, i)
	s.Lines[sub] = item.Line
	return sub
}

// EachItem runs each on every item of the list n at path, in file order,
// recording the line of each.
func (s *Source) EachItem(n *yaml.Node, path string, each func(item *yaml.Node, path string) error) error {
	for i, item := range n.Content {
		if err := each(item, s.Item(path, i, item)); err != nil {
			return err
		}
	}
	return nil
}

// KeyPath names key inside path: "pfcp" + "listen" is "pfcp.listen".
func KeyPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// ItemPath names item i of the list at path: "interfaces[1]".
func ItemPath(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}

// Document returns the content of the file's one document, or nil if the
// file holds only comments or null. Keys after a stray "---" would
// otherwise be ignored without a word, so a second document that is not
// empty is refused; reader says who reads one, as in "upfd reads one".
func (s *Source) Document(data []byte, reader string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, s.syntaxError(data, err)
	}
	for {
		var more yaml.Node
		err := dec.Decode(&more)
		switch {
		case errors.Is(err, io.EOF):
			if len(doc.Content) == 0 || IsNull(doc.Content[0]) {
				return nil, nil
			}
			return doc.Content[0], nil
		case err != nil:
			return nil, s.syntaxError(data, err)
		case len(more.Content) > 0 && !IsNull(more.Content[0]):
			return nil, s.Errorf(more.Content[0].Line, "",
				"a second YAML document starts here; %s, so remove the \"---\" above it", reader)
		}
	}
}

// syntaxError turns a yaml.v3 error ("yaml: line 3: ...") into ours, finding
// the line where yaml.v3 leaves it out.
func (s *Source) syntaxError(data []byte, err error) error {
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
	return s.Errorf(line, "", "invalid YAML: %s; %s", msg, hint)
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

// IsNull reports whether n is null: ~, null, or nothing at all.
func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// KindName says what a node is in the user's words.
func KindName(n *yaml.Node) string {
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

// OrList joins words as "a, b or c".
func OrList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Quote shows a value from the file in an error: quoted, so that it stays on
// one line, and cut short, so that a runaway value does not drown the hint.
func Quote(s string) string {
	const limit = 64
	if utf8.RuneCountInString(s) <= limit {
		return strconv.Quote(s)
	}
	return strconv.Quote(string([]rune(s)[:limit])) + "..."
}

// EditDistance is the Levenshtein distance between a and b: how far a
// mistyped key is from a known one, for "did you mean".
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
