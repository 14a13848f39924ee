package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

// realUERun is a run with an iperf step (one measurement beside its
// ceiling, one under an MBR) and a web step.
func realUERun() *Run {
	run := New("realue", UPF{Name: "upfd"}, Sessions{Count: 10, Profile: "plain", Flows: 1})
	run.AddIperf(Header{Name: "iperf3", Kind: "iperf", Setup: "1 UEs × 1"},
		Iperf{Protocol: "tcp", Direction: "uplink", UEs: 2, Streams: 1, Seconds: 5, Mbps: 3000, PerUEMbps: []float64{1000, 2000},
			Retransmits: 12, Ceiling: &Iperf{Protocol: "tcp", Direction: "uplink", UEs: 2, Streams: 1, Mbps: 6000, PerUEMbps: []float64{3000, 3000}}},
		Iperf{Protocol: "tcp", Direction: "downlink", UEs: 1, Streams: 1, MBRMbps: 10, Seconds: 5, Mbps: 9.5, PerUEMbps: []float64{9.5}})
	run.AddWeb(Header{Name: "web 100", Kind: "web", Setup: "100 subscribers"}, WebLoad{Subscribers: 100, Seconds: 10,
		Uplink:   WebDirection{Direction: "uplink", Gbps: 0.2, OfferedGbps: 0.209, UDPSent: 1000, UDPReceived: 999, LossPct: 0.1},
		Downlink: WebDirection{Direction: "downlink", Gbps: 0.39, OfferedGbps: 0.395, UDPSent: 2000, UDPReceived: 2000},
		Fetches:  1000, FetchP50Ms: 3.5, FetchP99Ms: 20,
		Ceiling: &WebLoad{Subscribers: 100, Uplink: WebDirection{Direction: "uplink", Gbps: 0.2},
			Downlink: WebDirection{Direction: "downlink", Gbps: 0.4}}})
	return run
}

func TestRealUEResults(t *testing.T) {
	run := realUERun()
	x := run.Steps[0].Iperf
	if *x[0].RatioToCeiling != 0.5 || x[0].OfMBR != nil || *x[1].OfMBR != 0.95 || x[1].RatioToCeiling != nil {
		t.Errorf("ratios: %+v", x)
	}
	if r := run.Steps[1].Web[0].Downlink.RatioToCeiling; r == nil || *r < 0.974 || *r > 0.976 {
		t.Errorf("web downlink x ceiling %v; want 0.975", r)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, run); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## iperf3 from real UEs",
		"| 1 | iperf3 | 2 × 1 | tcp | – | uplink | 3000.0<br>1000.0 / 2000.0 / 2000.0 | 12 | – | 6000.0 | 0.50 |  |",
		"| 1 | iperf3 | 1 × 1 | tcp | 10 | downlink | 9.5<br>9.5 / 9.5 / 9.5 | 0 | – | – |  | 0.95 |",
		"## Subscribers with real connections",
		"| 100 | UPF | 0.20 | 0.10000% | 0.39 | 0.00000% | 96% / 99% | 3.5 / 20.0 (0) | 0 / 0 | – | 1.00 / 0.97 |",
		"| 100 | ceiling | 0.20 | 0.00000% | 0.40 |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("run.md lacks\n%s\nin\n%s", want, md.String())
		}
	}
	var c bytes.Buffer
	if err := WriteCSV(&c, run); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// iperf: a row, its ceiling's, the policed one; web: two directions,
	// and the ceiling's two.
	if len(rows) != 1+3+4 {
		t.Errorf("%d CSV rows; want a header and 7", len(rows))
	}
	var cmp bytes.Buffer
	if err := Compare(&cmp, []Compared{{Label: "a.json", Run: run}, {Label: "b.json", Run: New("empty", UPF{}, Sessions{})}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 2 × 1 tcp uplink | A |", "| 1 × 1 tcp downlink, MBR 10 | B |", "| 100 | A |"} {
		if !strings.Contains(cmp.String(), want) {
			t.Errorf("compare lacks %q in\n%s", want, cmp.String())
		}
	}
}

// The terminal's tables of real UEs: aligned, no HTML, a UE's spread in
// brackets after the total.
func TestRealUEResultsForATerminal(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, realUERun()); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"iperf3 from real UEs\n",
		"  1  iperf3          2 × 1       tcp       –     uplink  3000.0 (1000.0 / 2000.0 / 2000.0)             12",
		"Subscribers with real connections\n  2. web 100: 100 subscribers\n",
		"  100          UPF                    0.20            0.10000%",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the terminal's text lacks\n%s\nin\n%s", want, text)
		}
	}
	if strings.Contains(text, "<br>") || strings.Contains(text, "|") {
		t.Errorf("the terminal's text has Markdown or HTML:\n%s", text)
	}
}
