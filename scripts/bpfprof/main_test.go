package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Addresses in hex, as perf gives them: 0x1000 = 4096. A program of two functions, the second a subprogram; samples in each,
// between lines, and outside both.
const linesJSON = `[{"Case": "uplink, 1 PDR", "Name": "xdp_n3", "Runs": 1000, "Funcs": [
	{"Name": "xdp_n3", "Start": 4096, "Len": 64, "Lines": [
		{"Addr": 4096, "Src": "../../bpf/upf.bpf.c:10", "Text": "int xdp_n3(struct xdp_md *ctx)"},
		{"Addr": 4112, "Src": "../../bpf/lib/parse.h:20", "Text": "  if (h + 1 > end)"},
		{"Addr": 4128, "Src": "../../bpf/upf.bpf.c:10", "Text": "int xdp_n3(struct xdp_md *ctx)"}]},
	{"Name": "fwd_fib", "Start": 8192, "Len": 32, "Lines": [
		{"Addr": 8192, "Src": "../../bpf/lib/fwd.h:30", "Text": "rc = bpf_fib_lookup(ctx, &f, sizeof(f), 0);"}]}]}]`

func TestAttribute(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lines.json")
	if err := os.WriteFile(path, []byte(linesJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	progs, err := readPrograms(path)
	if err != nil {
		t.Fatal(err)
	}
	perf := strings.Join([]string{
		"     40000  1010",      // parse.h:20
		"     40000  1017",      // parse.h:20
		"     40000  1020",      // upf.bpf.c:10, its second place
		"     40000  1010",      // parse.h:20
		"     20000  2010",      // fwd_fib
		"     40000  ffffffff8", // the kernel's: not a program's
		"     40000  1040",      // just past xdp_n3
	}, "\n")
	if err := attribute(strings.NewReader(perf), progs); err != nil {
		t.Fatal(err)
	}
	p := progs[0]
	if got, want := p.perRun(p.total), 180.0; got != want {
		t.Errorf("ns a run: %v, want %v", got, want)
	}
	if got, want := p.byFunc["fwd_fib"], 20000.0; got != want {
		t.Errorf("fwd_fib: %v ns, want %v", got, want)
	}
	var out bytes.Buffer
	report(&out, progs, 10)
	for _, want := range []string{
		"| uplink, 1 PDR | xdp_n3 | 1000 | 180.0 |",
		"| parse.h | 120.0 | 67 % |",
		"| bpf/lib/parse.h:20 | 120.0 | 66.7 % | `if (h + 1 > end)` |",
		"| bpf/upf.bpf.c:10 | 40.0 | 22.2 % |",
		"| bpf/lib/fwd.h:30 | 20.0 | 11.1 % |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestAttributeRefusesOtherFields(t *testing.T) {
	err := attribute(strings.NewReader("xdp_n3+0x10 1000\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "perf script -F period,ip") {
		t.Fatalf("got %v, want a pointer to the fields it reads", err)
	}
}
