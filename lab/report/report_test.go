package report

import (
	"bytes"
	"errors"
	"flag"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/lab/cpu"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the current output")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run go test -update to write it", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output; if the change is meant, run go test -update and review the diff\n--- got:\n%s", path, got)
	}
}

var started = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// cpuAt is the CPU of a UPF whose process used process % and whose core 1
// spent softirq % in softirq.
func cpuAt(process, softirq float64) *CPU {
	return CPUOf(cpu.Usage{Process: process, Cores: []cpu.Core{
		{CPU: 0, Busy: 99, Softirq: 12},
		{CPU: 1, Busy: softirq + 5, Softirq: softirq},
	}}, 1)
}

// measured is a measurement of 5 s at size bytes a frame.
func measured(direction string, size uint64, tx, rx uint64) Measurement {
	frame := size + 42 // Ethernet, IPv4 and UDP headers
	if direction == "uplink" {
		frame += 44 // the tunnel on the way in
	}
	return NewMeasurement(direction, "1400", 0, 5*time.Second, tx, tx*frame, rx, rx*(size+42))
}

// withReference gives m a reference that received refRx of the same
// packets in the same time.
func withReference(m Measurement, refRx uint64) Measurement {
	ref := m
	ref.RxPackets, ref.LossPct = refRx, lossPct(m.TxPackets, refRx)
	ref.RxKpps = float64(refRx) / m.Seconds / 1e3
	ref.RxGbps = m.RxGbps * float64(refRx) / float64(m.RxPackets)
	ref.CPU, ref.Latency = nil, nil
	m.Reference = &ref
	return m
}

// inRounds makes m a closed loop's measurement in rounds: its rates per
// second of a core that gave it core seconds, and each round's Rx rate.
func inRounds(m Measurement, core float64, rounds []float64) Measurement {
	m.PerCoreSecond(time.Duration(core * float64(time.Second)))
	for _, rx := range rounds {
		m.Rounds = append(m.Rounds, Round{TxKpps: rx, RxKpps: rx})
	}
	return m
}

func ptr[T any](v T) *T { return &v }

// fixedRun is a run with every kind of step, as `upflab run` would fill it.
func fixedRun() *Run {
	run := &Run{
		Format: FormatVersion, Scenario: "default", Started: started, Finished: started.Add(92 * time.Second),
		Host:     Host{Name: "lab1", Kernel: "Linux 6.18.0", CPUModel: "Intel(R) Xeon(R) CPU @ 2.20GHz", CPUs: 2},
		UPF:      UPF{Name: "upfd", Version: "v0.4.0"},
		Sessions: Sessions{Count: 1000, Profile: "plain", Flows: 1, PerSecond: 15230},
	}
	run.Place(0, "generator, sink")
	run.Place(1, "upfd: n3 and n6 queues, XDP in softirq")

	up := withReference(measured("uplink", 1400, 9_000_000, 8_100_000), 9_000_000)
	up.CPU, up.Latency = cpuAt(0.4, 61.5), &Latency{P50: 38.2, P99: 121.7, Max: 904}
	down := withReference(measured("downlink", 1400, 9_500_000, 9_500_000), 9_500_000)
	down.CPU = cpuAt(0.2, 55.25)
	run.AddThroughput(Header{Name: "throughput both 1400 B max", Kind: "throughput", Setup: "both, 1400 B, max, 5s each"}, up, down)

	// The closed loop, in rounds: each round's ratio is to the
	// reference's beside it.
	loop := Header{Name: "throughput both 64 B max 1 core", Kind: "throughput", Setup: "both, 64 B, max, 2s each, 1 core in 4 rounds"}
	upLoop := inRounds(measured("uplink", 64, 4_000_000, 4_000_000), 2.5, []float64{1700, 1500, 1600, 1650})
	upLoop.Reference = ptr(inRounds(measured("uplink", 64, 6_000_000, 6_000_000), 2.6, []float64{2400, 2300, 2500, 2200}))
	downLoop := inRounds(measured("downlink", 64, 4_200_000, 4_200_000), 2.5, []float64{1700, 1750, 1600, 1680})
	downLoop.Reference = ptr(inRounds(measured("downlink", 64, 6_400_000, 6_400_000), 2.6, []float64{2500, 2500, 2400, 2600}))
	run.AddThroughput(loop, upLoop, downLoop)

	ndr := Header{Name: "ndr both 1400 B", Kind: "ndr", Setup: "both, 1400 B, loss <= 0%, 1s trials, at most 8, resolution 10kpps"}
	trial := func(direction string, offered float64, tx, rx uint64, passed bool) Trial {
		m := NewMeasurement(direction, "1400", offered, time.Second, tx, tx*1486, rx, rx*1442)
		return Trial{Measurement: m, Passed: passed}
	}
	final := func(t Trial) Trial { t.Final = true; return t }
	search := NewSearch("uplink", "1400", 0, []Trial{
		trial("uplink", 0, 1_800_000, 1_620_000, false), trial("uplink", 900, 900_000, 900_000, true),
		trial("uplink", 1350, 1_350_000, 1_349_990, false), final(trial("uplink", 1125, 1_125_000, 1_125_000, true)),
		final(trial("uplink", 1125, 1_124_000, 1_124_000, true)), final(trial("uplink", 1125, 1_126_000, 1_126_000, true)),
	})
	ref := NewSearch("uplink", "1400", 0, []Trial{final(trial("uplink", 0, 1_800_000, 1_800_000, true)),
		final(trial("uplink", 0, 1_790_000, 1_790_000, true)), final(trial("uplink", 0, 1_810_000, 1_810_000, true))})
	search.Reference = &ref
	run.AddNDR(ndr, search)
	run.AddNDR(ndr, NewSearch("downlink", "1400", 0, []Trial{trial("downlink", 0, 1_800_000, 1_000_000, false)}))

	ms := time.Millisecond
	run.AddPing(Header{Name: "ping 64-1400 B", Kind: "ping", Setup: "64-1400 B, 4 each, 10ms apart"},
		NewPing("198.18.7.10", 64, 4, []time.Duration{46 * ms / 1000, 49 * ms / 1000, 83 * ms / 1000, 48 * ms / 1000}, 31*ms),
		NewPing("198.18.7.10", 512, 4, []time.Duration{60 * ms / 1000, 62 * ms / 1000, 70 * ms / 1000}, 32*ms),
		NewPing("198.18.7.10", 1400, 4, []time.Duration{91 * ms / 1000, 95 * ms / 1000, 99 * ms / 1000, 97 * ms / 1000}, 31*ms))

	cbr := Header{Name: "cbr 64-1400 B max", Kind: "cbr", Setup: "64-1400 B, max, 2s each"}
	for _, c := range []struct {
		size           int
		sent, received uint64
	}{{64, 4_000_000, 3_900_000}, {256, 3_800_000, 3_800_000}, {512, 3_500_000, 3_500_000}, {1400, 2_400_000, 2_399_000}} {
		run.AddCBR(cbr, NewCBR(c.size, 0, 2*time.Second, c.sent, c.received))
	}

	subs := Header{Name: "subscribers 100-2000", Kind: "subscribers", Setup: "100-2000 subscribers, 10s each"}
	for _, s := range []struct {
		count                  int
		upLost, downLost, refs uint64
	}{{100, 0, 0, 0}, {500, 12, 0, 0}, {1000, 90_000, 20_000, 0}, {2000, 2_000_000, 1_500_000, 300_000}} {
		upModel, downModel := 0.422*float64(s.count), 0.696*float64(s.count) // kpps
		upTx, downTx := uint64(upModel*1e4), uint64(downModel*1e4)
		if s.count == 2000 {
			downTx = downTx * 9 / 10 // the generator fell short
		}
		l := SubscriberLoad{Subscribers: s.count,
			Uplink:   NewMeasurement("uplink", "model", upModel, 10*time.Second, upTx, upTx*663, upTx-s.upLost, (upTx-s.upLost)*619),
			Downlink: NewMeasurement("downlink", "model", downModel, 10*time.Second, downTx, downTx*709, downTx-s.downLost, (downTx-s.downLost)*753),
			CPU:      cpuAt(0.3, 20+float64(s.count)/40),
		}
		l.Uplink = withReference(l.Uplink, upTx-s.refs)
		l.Downlink = withReference(l.Downlink, downTx-s.refs)
		run.AddSubscribers(subs, l)
	}

	run.AddChurn(Header{Name: "churn 100/s", Kind: "churn", Setup: "100/s for 10s"}, Churn{
		TargetPerSecond: 100, AchievedPerSecond: 99.8, Seconds: 10, Established: 998, Deleted: 998, Failed: 2,
		SetupP50Ms: 0.41, SetupP99Ms: 2.35,
	})
	run.AddError(Header{Name: "throughput uplink 64 B max", Kind: "throughput", Setup: "uplink, 64 B, max, 5s each"},
		errors.New("generator: attach to n3: no such device"))
	return run
}

// TestWriters compares each format's output for fixedRun with its golden
// file.
func TestWriters(t *testing.T) {
	for file, write := range map[string]func(io.Writer, *Run) error{
		"run.json": WriteJSON,
		"run.csv":  WriteCSV,
		"run.md":   WriteMarkdown,
		"run.txt":  WriteText,
	} {
		t.Run(file, func(t *testing.T) {
			var b bytes.Buffer
			if err := write(&b, fixedRun()); err != nil {
				t.Fatal(err)
			}
			golden(t, file, b.Bytes())
		})
	}
}

func TestJSONReadsBackTheSame(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(fixedRun(), dir, []string{"json"}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fixedRun(); !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v\nwant %+v", got, want)
	}
}

func TestReadJSONRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"not-json.json":   "Global Statistics\n",
		"other.json":      `{"format": "trex/3"}`,
		"no-format.json":  `{"scenario": "x"}`,
		"wrong-type.json": `{"format": "upflab-run/1", "steps": 3}`,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadJSON(path); !errors.Is(err, ErrFormat) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: got %v; want ErrFormat, prefixed with the path", name, err)
		}
	}
}

func TestRatioToReference(t *testing.T) {
	run := fixedRun()
	up := run.Steps[0].Throughput[0]
	if up.RatioToReference == nil || *up.RatioToReference != 0.9 || up.RatioSpread != nil {
		t.Errorf("uplink ratio %v (spread %v); want 0.9: 8.1 M of the reference's 9 M packets, in one round", up.RatioToReference, up.RatioSpread)
	}
	// Rounds of 1700/2400, 1500/2300, 1600/2500, 1650/2200: ratios 0.708,
	// 0.652, 0.64, 0.75; the median is between the middle two.
	loop := run.Steps[1].Throughput[0]
	ratios := []float64{1600.0 / 2500, 1500.0 / 2300, 1700.0 / 2400, 1650.0 / 2200}
	median := (ratios[1] + ratios[2]) / 2
	spread := Spread{Low: ratios[0] + 0.75*(ratios[1]-ratios[0]), High: ratios[2] + 0.25*(ratios[3]-ratios[2])}
	if loop.RatioToReference == nil || *loop.RatioToReference != median || loop.RatioSpread == nil || *loop.RatioSpread != spread {
		t.Errorf("closed-loop ratio %v, spread %+v; want the rounds' median %v and quartiles %+v", loop.RatioToReference, loop.RatioSpread, median, spread)
	}
	if loop.CoreSeconds != 2.5 || loop.RxKpps != 1600 {
		t.Errorf("closed loop: %v core seconds, %v kpps; want 2.5 and 4 M packets over them", loop.CoreSeconds, loop.RxKpps)
	}
	search := run.Steps[2].NDR[0]
	if !search.Found || search.Result.OfferedKpps != 1125 || search.Result.TxPackets != 1_125_000 {
		t.Errorf("NDR found %v: %+v; want the trial of median rate at 1125", search.Found, search.Result)
	}
	// The trials at the rates found, in pairs: 1125/1800, 1124/1790, 1126/1810.
	pairs := []float64{1126.0 / 1810, 1125.0 / 1800, 1124.0 / 1790}
	if r, sp := search.RatioToReference, search.RatioSpread; r == nil || *r != pairs[1] || sp == nil ||
		*sp != (Spread{Low: (pairs[0] + pairs[1]) / 2, High: (pairs[1] + pairs[2]) / 2}) {
		t.Errorf("NDR ratio %v, spread %+v; want the median of %v and its quartiles", r, sp, pairs)
	}
	if down := run.Steps[2].NDR[1]; down.Found || down.RatioToReference != nil {
		t.Errorf("a search where no trial passed: found %v, ratio %v; want neither", down.Found, down.RatioToReference)
	}
}

func TestNewPingIsPingsSummary(t *testing.T) {
	us := time.Microsecond
	p := NewPing("198.18.7.10", 56, 10, []time.Duration{285 * us, 292 * us, 282 * us, 221 * us, 319 * us,
		219 * us, 260 * us, 232 * us, 261 * us, 258 * us}, 9215*time.Millisecond)
	// The replies of seed 001's ping, which says 0.219/0.262/0.319/0.030 ms
	// from times it kept finer than it printed; from these, avg is 262.9 µs
	// and mdev, the standard deviation, 30.86 µs.
	var b strings.Builder
	pingSummary(&b, p)
	want := "PING 198.18.7.10 (198.18.7.10) 56(84) bytes of data.\n" +
		"--- 198.18.7.10 ping statistics ---\n" +
		"10 packets transmitted, 10 received, 0% packet loss, time 9215ms\n" +
		"rtt min/avg/max/mdev = 0.219/0.263/0.319/0.031 ms\n\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPlots(t *testing.T) {
	want := map[string][2]int{
		"01-throughput-rate.png":  {PlotWidth, 2 * PanelHeight},
		"02-throughput-rate.png":  {PlotWidth, 3 * PanelHeight}, // in rounds: their ratios too
		"03-ndr-trials.png":       {PlotWidth, 2 * PanelHeight}, // a search each way
		"04-ping-rtt.png":         {PlotWidth, ChartHeight},
		"05-cbr-pps.png":          {PlotWidth, 2 * PanelHeight}, // over the loss
		"05-cbr-mbps.png":         {PlotWidth, 2 * PanelHeight},
		"06-subscribers-load.png": {PlotWidth, 2 * PanelHeight},
	}
	for _, p := range Plots(fixedRun()) {
		if want := "upfd v0.4.0 on lab1: Linux 6.18.0, Intel(R) Xeon(R) CPU @ 2.20GHz × 2, 2026-11-22"; p.Caption != want {
			t.Errorf("%s: caption %q; want the UPF, the host and the date: %q", p.File, p.Caption, want)
		}
	}
	dir := t.TempDir()
	files, err := Write(fixedRun(), dir, []string{"png"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) {
		t.Errorf("wrote %v; want %d plots", files, len(want))
	}
	for _, path := range files {
		size, ok := want[filepath.Base(path)]
		if !ok {
			t.Errorf("unexpected plot %s", path)
			continue
		}
		img := decodePNG(t, path)
		if got := img.Bounds().Size(); got != image.Pt(size[0], size[1]) {
			t.Errorf("%s is %v; want %dx%d", path, got, size[0], size[1])
		}
		if colors := distinctColors(img); colors < 20 {
			t.Errorf("%s has %d colours; want text, lines and anti-aliasing", path, colors)
		}
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s does not decode as PNG: %v", path, err)
	}
	return img
}

func distinctColors(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

func TestWriteAllFormats(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "default-20261122-100000")
	files, err := Write(fixedRun(), dir, Formats)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"run.json", "run.csv", "run.md", "04-ping-rtt.png"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s not written: %v (wrote %v)", name, err, files)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "run.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "![Round-trip time by size: ping 64-1400 B](04-ping-rtt.png)") {
		t.Error("run.md does not show the plots written beside it")
	}
	if _, err := Write(fixedRun(), dir, []string{"html"}); err == nil {
		t.Error("Write took the unknown format html")
	}
}

func TestThisHost(t *testing.T) {
	h := ThisHost()
	if h.CPUs < 1 || !strings.HasPrefix(h.Kernel, "Linux ") {
		t.Errorf("ThisHost() = %+v; want the CPU count and the Linux release", h)
	}
	if got := cpuModel([]byte("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n")); got != "Intel(R) Xeon(R) CPU @ 2.20GHz" {
		t.Errorf("cpuModel = %q", got)
	}
}

// Rounds measured while BPF's run-time statistics were on are left out
// of the ratio, unless every round was; the run says so.
func TestRatioLeavesOutRoundsWithBPFStats(t *testing.T) {
	rounds := func(rx []float64, stats ...int) []Round {
		out := make([]Round, len(rx))
		for i, v := range rx {
			out[i] = Round{TxKpps: v, RxKpps: v, BPFStats: slices.Contains(stats, i)}
		}
		return out
	}
	upf := Measurement{Direction: "uplink", RxKpps: 800, Rounds: rounds([]float64{1000, 1000, 600, 700}, 1), BPFStats: true}
	ref := Measurement{Direction: "uplink", RxKpps: 1200, Rounds: rounds([]float64{2000, 1000, 1000, 1000})}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	r, sp := PacketRatio(upf, &ref)
	if r == nil || !near(*r, 0.6) || sp == nil || !near(sp.Low, 0.55) || !near(sp.High, 0.65) {
		t.Errorf("ratio %v, spread %v; want 0.6 (0.55-0.65) of 0.5, 0.6 and 0.7, without the round of 1.0", r, sp)
	}
	ref.Rounds = rounds([]float64{2000, 1000, 1000, 1000}, 0, 2)
	if r, _ := PacketRatio(upf, &ref); r == nil || !near(*r, 0.65) {
		t.Errorf("3 rounds of 4 with the statistics on: ratio %v; want all: the median of 0.5, 1, 0.6 and 0.7, 0.65", r)
	}
	ref.Rounds = rounds([]float64{2000, 1000, 1000, 1000}, 0)
	if r, _ := PacketRatio(upf, &ref); r == nil || !near(*r, 0.65) {
		t.Errorf("2 rounds of 4 with the statistics on: ratio %v; want the median of 0.6 and 0.7, 0.65", r)
	}
	run := fixedRun()
	run.AddThroughput(Header{Name: "stats", Kind: "throughput"}, withReference(upf, 1000))
	var b bytes.Buffer
	if err := WriteText(&b, run); err != nil || !strings.Contains(b.String(), "BPF's run-time statistics were on during step 9:") {
		t.Errorf("the terminal's summary does not say which step ran with BPF's statistics on (%v):\n%s", err, b.String())
	}
}

// At a set rate the generator may fall short, not by as much on each
// path: the ratio is of the shares that arrived, not of the rates.
func TestRatioAtASetRate(t *testing.T) {
	upf := NewMeasurement("uplink", "64", 100, time.Second, 90_000, 0, 90_000, 0)
	ref := NewMeasurement("uplink", "64", 100, time.Second, 100_000, 0, 100_000, 0)
	if r, _ := PacketRatio(upf, &ref); r == nil || *r != 1 {
		t.Errorf("both forwarded all they were sent: ratio %v; want 1", r)
	}
	upf = NewMeasurement("uplink", "64", 100, time.Second, 100_000, 0, 80_000, 0)
	if r, _ := PacketRatio(upf, &ref); r == nil || math.Abs(*r-0.8) > 1e-9 {
		t.Errorf("the UPF lost a fifth: ratio %v; want 0.8", r)
	}
}
