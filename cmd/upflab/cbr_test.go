package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
)

func TestCBRRefusesBadFlags(t *testing.T) {
	checkRefused(t, "cbr", func(args []string) error { _, err := parseCBR(args); return err }, []refused{
		{"a size holds the stamp", []string{"--sizes", "16,64"}, `"16": want payload bytes from 24`},
		{"a size is a number", []string{"--sizes", "64,big"}, `"big": want sizes in bytes`},
		{"each size once", []string{"--sizes", "64,1400,64"}, "64 twice"},
		{"a rate is a rate", []string{"--rate", "fast"}, `"fast" is not a rate`},
		{"a path is a UPF or the reference", []string{"--through", "wire"}, `"wire" for flag -through: want upf or reference`},
		{"a duration has a unit", []string{"--duration", "2"}, "want a duration above 0 with its unit"},
		{"no arguments", []string{"1400"}, `unexpected argument "1400"`},
	})
}

func TestCBRLineIsOcbrs(t *testing.T) {
	p := report.NewCBR(1400, 100, 2*time.Second, 200_000, 199_990)
	want := "Size 1400:    199990 SDUs (   279986000 bytes) in      2000 ms => 99995.0000 p/s, 1119.9440 Mb/s; 200000 sent, 0.005% loss"
	if got := cbrLine(p); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

var cbrLineRE = regexp.MustCompile(`^Size +(\d+): +(\d+) SDUs \( *(\d+) bytes\) in +(\d+) ms => +([\d.]+) p/s, +([\d.]+) Mb/s; (\d+) sent, 0% loss$`)

// Through the reference forwarder, below saturation, every size's line
// has every frame sent arriving, at a rate its own counts and time give
// and no faster than asked. How close to the rate asked the generator
// comes is the host's business: a starved VM paces slower (bench, not
// test).
func TestPrivilegedCBRPrintsSaneLines(t *testing.T) {
	lab := testLab(t)
	r, err := parseCBR([]string{"--name", lab.Name, "--through", "reference", "--sizes", "64,1400", "--rate", "50kpps", "--duration", "300ms"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out strings.Builder
	if err := r.run(ctx, &out, lab); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	var sizes []string
	var arrived float64
	for _, line := range strings.Split(out.String(), "\n") {
		m := cbrLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		sizes = append(sizes, m[1])
		size, sdus, bytes, ms, pps, mbps, sent := num(m[1]), num(m[2]), num(m[3]), num(m[4]), num(m[5]), num(m[6]), num(m[7])
		arrived += sdus
		switch {
		case sdus != sent || bytes != sdus*size:
			t.Errorf("%q: want every frame sent to arrive, of its size", line)
		case ms < 250 || ms > 2000:
			t.Errorf("%q: want about 300 ms", line)
		case pps > 55_000 || pps < 0.98*sdus/(ms/1000) || pps > 1.02*sdus/(ms/1000):
			t.Errorf("%q: want the SDUs over the time, at most about 50000 p/s", line)
		case mbps < 0.99*pps*size*8/1e6 || mbps > 1.01*pps*size*8/1e6:
			t.Errorf("%q: want the payload bits of its packets", line)
		}
	}
	if strings.Join(sizes, ",") != "64,1400" {
		t.Errorf("lines for sizes %v, want 64 and 1400", sizes)
	}
	// A starved generator may send nothing of a size in its 300 ms (0 at
	// 1400 B with other work on the 2-core VM): the line must still add
	// up, but some frame must have gone through.
	if arrived == 0 {
		t.Error("nothing arrived at any size; want the frames sent")
	}
}

func num(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}
