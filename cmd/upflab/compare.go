package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/sluice-upf/sluice/lab/report"
)

func init() {
	register("compare", "set results side by side: upflab compare A.json B.json ...", runCompare)
}

const compareUsage = "upflab compare [-o FILE] A.json B.json ..."

// runCompare writes a Markdown table of the steps the runs share, with
// ratios to the first run, to standard output or a file.
func runCompare(args []string) error {
	fs := flags("compare")
	out := fs.String("o", "", "write the Markdown to `FILE` instead of standard output")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\nSets the run.json files of `upflab run` side by side; ratios are to A.\n", compareUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return err
	} else if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() < 2 {
		return fmt.Errorf("%w: %s: give two run.json files or more", errUsage, compareUsage)
	}
	runs := make([]report.Compared, fs.NArg())
	for i, path := range fs.Args() {
		run, err := report.ReadJSON(path)
		if err != nil {
			return err
		}
		runs[i] = report.Compared{Label: path, Run: run}
	}
	var md bytes.Buffer
	if err := report.Compare(&md, runs); err != nil {
		return err
	}
	if *out == "" {
		_, err := os.Stdout.Write(md.Bytes())
		return err
	}
	return os.WriteFile(*out, md.Bytes(), 0o644)
}
