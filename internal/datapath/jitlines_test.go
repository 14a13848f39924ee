package datapath

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
)

// jitProgram is where the machine code of one loaded program came from,
// written by the bench under SLUICE_BENCH_LINES for scripts/bpfprof, which
// puts perf's samples of the kernel's addresses back on source lines.
type jitProgram struct {
	Case  string    // the bench case that ran it
	Name  string    // the program's name
	Runs  uint64    // how many times it ran, as BPF statistics counted
	Funcs []jitFunc // the program, then its subprograms (the cold paths)
}

// jitFunc is one function of a program in the kernel's memory.
type jitFunc struct {
	Name  string
	Start uint64 // kernel address of its first byte
	Len   uint32 // bytes of machine code
	Lines []jitLine
}

// jitLine is the machine code from Addr on, up to the next line's, and
// the source line it was compiled from.
type jitLine struct {
	Addr uint64
	Src  string // file:line
	Text string
}

// writeJitLines writes the line tables of the cases' programs to path, as
// JSON, while they are still loaded: the program measured, and the
// generator and the sink that share its CPU in the closed loop.
func writeJitLines(path string, cases []*benchCase) error {
	var out []jitProgram
	for _, c := range cases {
		progs := []*ebpf.Program{c.gen.Program(), c.sink.Program()}
		names := []string{c.name + ", generator", c.name + ", sink"}
		if c.kind != kindFloor { // the floor is built by hand: no source lines
			progs, names = append(progs, c.program()), append(names, c.name)
		}
		for i, prog := range progs {
			p, err := lineTable(prog)
			if err != nil {
				return fmt.Errorf("%s: %w", names[i], err)
			}
			p.Case = names[i]
			out = append(out, p)
		}
	}
	data, err := json.MarshalIndent(out, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func lineTable(prog *ebpf.Program) (jitProgram, error) {
	info, err := prog.Info()
	if err != nil {
		return jitProgram{}, err
	}
	stats, err := prog.Stats()
	if err != nil {
		return jitProgram{}, err
	}
	starts, ok1 := info.JitedKsymAddrs()
	lens, ok2 := info.JitedFuncLens()
	addrs, ok3 := info.JitedLineInfos()
	if !ok1 || !ok2 || !ok3 || len(starts) != len(lens) {
		return jitProgram{}, fmt.Errorf("the kernel gives no line table of the machine code (bpf_jit_kallsyms?)")
	}
	funcs, err := info.FuncInfos()
	if err != nil {
		return jitProgram{}, err
	}
	lines, err := info.LineInfos()
	if err != nil {
		return jitProgram{}, err
	}
	if len(lines) != len(addrs) {
		return jitProgram{}, fmt.Errorf("%d lines, %d machine code addresses", len(lines), len(addrs))
	}
	p := jitProgram{Name: info.Name, Runs: stats.RunCount}
	for i, start := range starts {
		f := jitFunc{Name: info.Name, Start: uint64(start), Len: lens[i]}
		if i > 0 && i < len(funcs) {
			f.Name = funcs[i].Func.Name
		}
		p.Funcs = append(p.Funcs, f)
	}
	for i, l := range lines {
		for j := range p.Funcs {
			f := &p.Funcs[j]
			if addrs[i] >= f.Start && addrs[i] < f.Start+uint64(f.Len) {
				f.Lines = append(f.Lines, jitLine{Addr: addrs[i],
					Src: fmt.Sprintf("%s:%d", l.Line.FileName(), l.Line.LineNumber()), Text: l.Line.Line()})
			}
		}
	}
	return p, nil
}
