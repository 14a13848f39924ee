package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/sluice-upf/sluice/lab/report"
)

func init() {
	register("compare", "set results side by side: upflab compare A.json B.json ...", runCompare)
}

const compareSynopsis = "[-o FILE] A.json B.json ..."

// runCompare writes a Markdown table of the steps the runs share, with
// ratios to the first run, to standard output or a file.
func runCompare(args []string) error {
	fs := flags("compare", compareSynopsis+"\n\nSets the run.json files of `upflab run` side by side; ratios are to A.")
	out := fs.String("o", "", "write the Markdown to `FILE` instead of standard output")
	files, err := parseWithFiles(fs, args)
	if err != nil {
		return err
	}
	if len(files) < 2 {
		return fmt.Errorf("%w: upflab compare %s: give two run.json files or more", errUsage, compareSynopsis)
	}
	runs := make([]report.Compared, len(files))
	for i, path := range files {
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
