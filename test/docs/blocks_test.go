// Package docs runs the shell blocks of README.md and docs/*.md as a reader
// pastes them: each file's ```sh blocks in order, in one shell, from the
// repository's root, as root. A block that cannot run here says why in the
// line before it:
//
//	<!-- not run in CI: docker -->
//
// Each file runs in a world of its own that vanishes with it: a private
// mount namespace whose /run/netns (so the lab's namespaces are the file's
// alone, whatever other labs run), /sys/fs/bpf and repository (an overlay:
// what the blocks write, bin/ among it, goes nowhere) are its own.
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// block is a fenced code block of a Markdown file.
type block struct {
	file string
	line int    // of the opening fence, from 1
	info string // what follows the fence: sh, yaml, ...
	text string // its lines, without the fence's indentation
	skip string // why it does not run in CI, from the marker before it
}

// runs says whether the block is one to run.
func (b block) runs() bool { return b.info == "sh" && b.skip == "" }

var (
	fence  = regexp.MustCompile("^( *)```(.*)$")
	marker = regexp.MustCompile(`^\s*<!-- not run in CI: (.*) -->\s*$`)
)

// blocks reads the fenced blocks of the Markdown file path, named name.
// A marker must name a reason and stand right before an sh block.
func blocks(path, name string) ([]block, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	var out []block
	skip, skipLine := "", 0
	for i := 0; i < len(lines); i++ {
		if m := marker.FindStringSubmatch(lines[i]); m != nil {
			if strings.TrimSpace(m[1]) == "" {
				return nil, fmt.Errorf("%s:%d: the marker gives no reason", name, i+1)
			}
			skip, skipLine = m[1], i+1
			continue
		}
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			if skip != "" && strings.TrimSpace(lines[i]) != "" {
				return nil, fmt.Errorf("%s:%d: the marker is not right before a ```sh block", name, skipLine)
			}
			continue
		}
		bl := block{file: name, line: i + 1, info: strings.TrimSpace(m[2]), skip: skip}
		if skip != "" && bl.info != "sh" {
			return nil, fmt.Errorf("%s:%d: the marker is before a ```%s block, not a ```sh one", name, skipLine, bl.info)
		}
		skip = ""
		var text []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			text = append(text, strings.TrimPrefix(lines[i], m[1]))
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s:%d: the block is not closed", name, bl.line)
		}
		bl.text = strings.Join(text, "\n") + "\n"
		out = append(out, bl)
	}
	if skip != "" {
		return nil, fmt.Errorf("%s:%d: the marker is not right before a ```sh block", name, skipLine)
	}
	return out, nil
}

// docs are the Markdown files whose blocks are checked, relative to the
// repository's root: README.md and docs/*.md.
func docs(root string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	names := []string{"README.md"}
	for _, f := range files {
		names = append(names, filepath.Join("docs", filepath.Base(f)))
	}
	return names, nil
}

// script is the shell script that runs the blocks as pasted, one after
// the other, stopping at the first command that fails; before each it
// says which block runs, for the test to tell where it stopped.
func script(root string, bs []block) string {
	var s strings.Builder
	fmt.Fprintf(&s, "set -e\ncd %q\n", root)
	for _, b := range bs {
		fmt.Fprintf(&s, "echo %q\n%s", startLine(b), b.text)
	}
	return s.String()
}

// startLine is what the script prints before it runs b.
func startLine(b block) string { return fmt.Sprintf("=== %s:%d", b.file, b.line) }
