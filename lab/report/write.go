package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Formats are the output formats, by the names scenarios give them.
var Formats = []string{"json", "csv", "md", "png"}

// Write writes run into dir, which it makes if need be, in each of
// formats: run.json, run.csv, run.md, and a PNG per plot (see Plots). It
// returns the files written.
func Write(run *Run, dir string, formats []string) ([]string, error) {
	for _, f := range formats {
		if !slices.Contains(Formats, f) {
			return nil, fmt.Errorf("report: %q is not a format; want one of %v", f, Formats)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	withPlots := slices.Contains(formats, "png")
	writers := map[string]func(io.Writer) error{
		"json": func(w io.Writer) error { return WriteJSON(w, run) },
		"csv":  func(w io.Writer) error { return WriteCSV(w, run) },
		"md":   func(w io.Writer) error { return writeMarkdown(w, run, withPlots) },
	}
	var written []string
	for _, f := range formats {
		if f == "png" {
			continue
		}
		path := filepath.Join(dir, "run."+f)
		if err := writeFile(path, writers[f]); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	if withPlots {
		for _, p := range Plots(run) {
			path := filepath.Join(dir, p.File)
			if err := writeFile(path, p.WritePNG); err != nil {
				return written, err
			}
			written = append(written, path)
		}
	}
	return written, nil
}

// writeFile creates path and writes it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// WriteJSON writes run as indented JSON.
func WriteJSON(w io.Writer, run *Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(run)
}

// ErrFormat means a file is not a run of a layout this version reads.
var ErrFormat = errors.New("not an upflab run")

// ReadJSON reads a run that WriteJSON wrote.
func ReadJSON(path string) (*Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var run Run
	if err := json.Unmarshal(data, &run); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrFormat, err)
	}
	if run.Format != FormatVersion {
		return nil, fmt.Errorf("%s: %w: format %q; want %q", path, ErrFormat, run.Format, FormatVersion)
	}
	return &run, nil
}
