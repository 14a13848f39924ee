package config

import (
	"fmt"
	"math"
	"strings"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// origin is where the keys of a Config were set: the file, then the
// environment variables and flags that override it.
type origin struct {
	file      *source    // the file's key lines; its File is "" when no file was read
	overrides []override // in the order applied: variables, then flags
}

// override is one environment variable or flag and the key it set.
type override struct {
	path string  // the key, e.g. "pfcp.t1" or "interfaces"
	src  *source // File is "env UPFD_PFCP_T1" or "flag --pfcp.t1"; Lines are the paths its value set
}

// covers reports whether o set path, or a key or item inside it.
func (o *override) covers(path string) bool {
	rest, ok := strings.CutPrefix(path, o.path)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// setter is the index of the variable or flag that set path last, or -1
// if the file or the defaults did.
func (g *origin) setter(path string) int {
	if g == nil {
		return -1
	}
	for i := len(g.overrides) - 1; i >= 0; i-- {
		if g.overrides[i].covers(path) {
			return i
		}
	}
	return -1
}

// fileSource is the file's source, nil for a Config built in code.
func (g *origin) fileSource() *source {
	if g == nil {
		return nil
	}
	return g.file
}

// has reports whether path was set, rather than left at its default.
func (g *origin) has(path string) bool {
	if i := g.setter(path); i >= 0 {
		return g.overrides[i].src.Has(path)
	}
	return g.fileSource().Has(path)
}

// mention says where path was set, to point at the other half of a
// conflict: " (line 4)", " (env UPFD_PFCP_PEERS)", or "" for a default.
func (g *origin) mention(path string) string {
	if i := g.setter(path); i >= 0 {
		return " (" + g.overrides[i].src.File + ")"
	}
	if line := g.fileSource().Line(path); line > 0 {
		return fmt.Sprintf(" (line %d)", line)
	}
	return ""
}

// problem is a problem found in a Config and the rank of where its value
// came from: the file in line order, then the variables and flags in the
// order applied, then the defaults.
type problem struct {
	err  *yamlfile.Error
	rank int
}

// problemAt is msg about the value at path, named after where it came from.
func (g *origin) problemAt(path, msg string) problem {
	if i := g.setter(path); i >= 0 {
		o := g.overrides[i]
		return problem{&yamlfile.Error{File: o.src.File, Key: keyWithin(path, o.path), Msg: msg}, math.MaxInt/2 + i}
	}
	file := g.fileSource()
	line := file.Line(path)
	rank := line
	if line == 0 {
		rank = math.MaxInt
	}
	return problem{&yamlfile.Error{File: file.Name(), Line: line, Key: path, Msg: msg}, rank}
}

// earliest returns the first problem by rank, or nil if there is none; of
// equal ranks, the first given.
func earliest(problems []problem) error {
	if len(problems) == 0 {
		return nil
	}
	best := problems[0]
	for _, p := range problems[1:] {
		if p.rank < best.rank {
			best = p
		}
	}
	return best.err
}

// keyWithin is the key an error about path shows after the name of the
// variable or flag that set key: none for key itself, which the name
// says, and the full path for a key or item inside it.
func keyWithin(path, key string) string {
	if path == key {
		return ""
	}
	return path
}
