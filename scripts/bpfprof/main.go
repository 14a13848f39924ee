// Command bpfprof puts perf's samples of the kernel back on the source
// lines of the eBPF programs the datapath bench ran, in ns a packet:
//
//	perf script -F period,ip -i perf.data | go run ./scripts/bpfprof -lines lines.json
//
// lines.json is the bench's line table (SLUICE_BENCH_LINES); each sample's
// period is the CPU time it stands for, and a program's time over its runs
// is its cost a packet. Only the programs' own code is counted: the
// helpers and map functions they call are the kernel's, and so is the
// clock BPF statistics read around each run. scripts/bench-profile.sh runs
// the whole thing.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The bench's line table (internal/datapath/jitlines_test.go).
type program struct {
	Case  string
	Name  string
	Runs  uint64
	Funcs []function
}

type function struct {
	Name  string
	Start uint64
	Len   uint32
	Lines []line
}

type line struct {
	Addr uint64
	Src  string
	Text string
}

// profile is the CPU time, in ns, each source line of a program stood for.
type profile struct {
	prog   *program
	total  float64
	byLine map[int]float64 // index into lines
	lines  []line          // all functions' lines, by address
	byFunc map[string]float64
}

func main() {
	linesPath := flag.String("lines", "", "the bench's line table (SLUICE_BENCH_LINES)")
	top := flag.Int("top", 25, "source lines listed for each program")
	flag.Parse()
	if *linesPath == "" {
		fmt.Fprintln(os.Stderr, "bpfprof: -lines is required: the file the bench wrote under SLUICE_BENCH_LINES")
		os.Exit(2)
	}
	progs, err := readPrograms(*linesPath)
	if err == nil {
		err = attribute(os.Stdin, progs)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bpfprof:", err)
		os.Exit(1)
	}
	report(os.Stdout, progs, *top)
}

func readPrograms(path string) ([]*profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var progs []program
	if err := json.Unmarshal(data, &progs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []*profile
	for i := range progs {
		p := &profile{prog: &progs[i], byLine: map[int]float64{}, byFunc: map[string]float64{}}
		for _, f := range progs[i].Funcs {
			p.lines = append(p.lines, f.Lines...)
		}
		slices.SortFunc(p.lines, func(a, b line) int { return cmp.Compare(a.Addr, b.Addr) })
		out = append(out, p)
	}
	return out, nil
}

// attribute reads perf script's "period ip" lines and charges each
// sample to the program, function and source line its address falls in.
func attribute(r io.Reader, progs []*profile) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			continue
		}
		period, err1 := strconv.ParseFloat(fields[0], 64)
		ip, err2 := strconv.ParseUint(fields[1], 16, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("not perf script -F period,ip: %q", sc.Text())
		}
		charge(progs, ip, period)
	}
	return sc.Err()
}

func charge(progs []*profile, ip uint64, period float64) {
	for _, p := range progs {
		for _, f := range p.prog.Funcs {
			if ip < f.Start || ip >= f.Start+uint64(f.Len) {
				continue
			}
			p.total += period
			p.byFunc[f.Name] += period
			if i := sort.Search(len(p.lines), func(i int) bool { return p.lines[i].Addr > ip }) - 1; i >= 0 {
				p.byLine[i] += period
			}
			return
		}
	}
}

func report(w io.Writer, progs []*profile, top int) {
	fmt.Fprintf(w, "| case | program | runs | ns/pkt in its own code |\n| --- | --- | ---: | ---: |\n")
	for _, p := range progs {
		fmt.Fprintf(w, "| %s | %s | %d | %.1f |\n", p.prog.Case, p.prog.Name, p.prog.Runs, p.perRun(p.total))
	}
	for _, p := range progs {
		if p.total == 0 {
			continue
		}
		fmt.Fprintf(w, "\n### %s: %s, %.1f ns/pkt\n\n", p.prog.Case, p.prog.Name, p.perRun(p.total))
		byFile := map[string]float64{}
		for i, ns := range p.byLine {
			byFile[filepath.Base(strings.Split(p.lines[i].Src, ":")[0])] += ns
		}
		if len(p.byFunc) > 1 { // a subprogram ran: a cold path on the hot one
			fmt.Fprintf(w, "| function | ns/pkt | share |\n| --- | ---: | ---: |\n")
			for _, k := range byValue(p.byFunc) {
				fmt.Fprintf(w, "| %s | %.1f | %.0f %% |\n", k, p.perRun(p.byFunc[k]), 100*p.byFunc[k]/p.total)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "| file | ns/pkt | share |\n| --- | ---: | ---: |\n")
		for _, k := range byValue(byFile) {
			fmt.Fprintf(w, "| %s | %.1f | %.0f %% |\n", k, p.perRun(byFile[k]), 100*byFile[k]/p.total)
		}
		// A source line's code may be in several places (inlined, unrolled).
		bySrc, text := map[string]float64{}, map[string]string{}
		for i, ns := range p.byLine {
			src := strings.TrimLeft(p.lines[i].Src, "./")
			bySrc[src] += ns
			text[src] = strings.TrimSpace(p.lines[i].Text)
		}
		fmt.Fprintf(w, "\n| source line | ns/pkt | share | code |\n| --- | ---: | ---: | --- |\n")
		srcs := byValue(bySrc)
		for _, src := range srcs[:min(top, len(srcs))] {
			fmt.Fprintf(w, "| %s | %.1f | %.1f %% | `%s` |\n", src, p.perRun(bySrc[src]), 100*bySrc[src]/p.total, text[src])
		}
	}
}

func (p *profile) perRun(ns float64) float64 {
	if p.prog.Runs == 0 {
		return 0
	}
	return ns / float64(p.prog.Runs)
}

// byValue is m's keys, largest value first.
func byValue(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(m[b], m[a]) })
	return keys
}
