package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/tgen"
	"github.com/sluice-upf/sluice/lab/topo"
)

// refused is a command line a verb must refuse, and what its usage
// error must say.
type refused struct {
	name string
	args []string
	want string
}

func checkRefused(t *testing.T, verb string, parse func([]string) error, cases []refused) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := parse(tc.args)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %q: %v, want a usage error saying %q", verb, tc.args, err, tc.want)
			}
		})
	}
}

func TestGenRefusesBadFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sessions.json")
	checkRefused(t, "gen", func(args []string) error { _, err := parseGen(args); return err }, []refused{
		{"a run must end", nil, "give --count, --duration or both"},
		{"a direction is up or down", []string{"-n", "1", "--direction", "sideways"}, `--direction "sideways": want uplink or downlink`},
		{"a payload holds the stamp", []string{"-n", "1", "--size", "16"}, `"16": want payload bytes from 24`},
		{"a payload fits the MTU", []string{"-n", "1", "--size", "1500"}, "to 1428 (a 1500-byte MTU after the tunnel)"},
		{"a weight is a whole number", []string{"-n", "1", "--size", "64:0"}, `"0" is not a weight`},
		{"a mix weighs 16 at most", []string{"-n", "1", "--size", "64:9,128:8"}, "weights adding up to 16 at the most"},
		{"a rate has a unit", []string{"-n", "1", "--rate", "100"}, `"100" has no unit; want e.g. 100kpps`},
		{"a rate is a rate", []string{"-n", "1", "-m", "fast"}, `"fast" is not a rate`},
		{"a duration has a unit", []string{"-d", "10"}, "want a duration above 0 with its unit"},
		{"a CPU takes one worker", []string{"-n", "1", "--cpus", "0,0"}, "CPU 0 twice"},
		{"a CPU is there", []string{"-n", "1", "--cpus", "4096"}, "want CPU numbers from 0"},
		{"no sessions is none to send", []string{"-n", "1", "--sessions", "0"}, "--sessions 0: want 1 to 1000000"},
		{"flows are bounded", []string{"-n", "1", "--flows", "2000"}, "--flows 2000: want 1 to 1024"},
		{"all flows are bounded", []string{"-n", "1", "--sessions", "2000", "--flows", "1000"}, "more than 1048576 flows in all"},
		{"TEIDs do not wrap", []string{"-n", "1", "--sessions", "2", "--teid-ul", "0xffffffff"}, "run past 0xffffffff"},
		{"TEID 0 is no session's", []string{"-n", "1", "--teid-dl", "0"}, "start at 1 at least"},
		{"UEs are IPv4", []string{"-n", "1", "--ue", "2001:db8::1"}, "--ue 2001:db8::1: want an IPv4 address"},
		{"a QFI has 6 bits", []string{"-n", "1", "--qfi", "64"}, "--qfi 64: want 0 to 63"},
		{"a file gives the sessions alone", []string{"-n", "1", "--sessions-file", file, "--sessions", "3", "--qfi", "1"}, "leave out --qfi, --sessions"},
		{"no arguments", []string{"-n", "1", "extra"}, `unexpected argument "extra"`},
	})
}

func TestGenNumbersSessionsAsTheSMFEmulator(t *testing.T) {
	g, err := parseGen([]string{"-n", "1", "--sessions", "3", "--ue", "10.45.0.254", "--teid-ul", "0x100", "--teid-dl", "7", "--qfi", "5", "--flows", "2"})
	if err != nil {
		t.Fatal(err)
	}
	want := []tgen.Session{
		{UE: netip.MustParseAddr("10.45.0.254"), UplinkTEID: 0x100, DownlinkTEID: 7, QFI: 5},
		{UE: netip.MustParseAddr("10.45.0.255"), UplinkTEID: 0x101, DownlinkTEID: 8, QFI: 5},
		{UE: netip.MustParseAddr("10.45.1.0"), UplinkTEID: 0x102, DownlinkTEID: 9, QFI: 5},
	}
	if !slices.Equal(g.t.Sessions, want) || g.t.Flows != 2 || g.t.Direction != scenario.Uplink {
		t.Errorf("got %+v", g.t)
	}
	d, err := parseGen([]string{"-n", "1"})
	if err != nil {
		t.Fatal(err)
	}
	if one := (tgen.Session{UE: topo.UEAddr(topo.UEPool, 0), UplinkTEID: 0x1000_0000, DownlinkTEID: 1, QFI: 9}); !slices.Equal(d.t.Sessions, []tgen.Session{one}) {
		t.Errorf("defaults: %+v, want %+v, as upflab smf --give-teids makes its first session", d.t.Sessions, one)
	}
}

func TestGenReadsTheSMFEmulatorsSessions(t *testing.T) {
	list := []smf.Session{
		{UE: netip.MustParseAddr("10.45.0.1"), UplinkTEID: 0x11, DownlinkTEID: 1, QFI: 1},
		{UE: netip.MustParseAddr("10.45.0.2"), UplinkTEID: 0x2a, DownlinkTEID: 2, QFI: 1},
	}
	file := filepath.Join(t.TempDir(), "sessions.json")
	if err := writeSessions(file, list); err != nil { // as upflab smf --json does
		t.Fatal(err)
	}
	g, err := parseGen([]string{"-n", "1", "--sessions-file", file})
	if err != nil {
		t.Fatal(err)
	}
	want := []tgen.Session{{UE: list[0].UE, UplinkTEID: 0x11, DownlinkTEID: 1, QFI: 1}, {UE: list[1].UE, UplinkTEID: 0x2a, DownlinkTEID: 2, QFI: 1}}
	if !slices.Equal(g.t.Sessions, want) {
		t.Errorf("got %+v, want %+v", g.t.Sessions, want)
	}
	for name, content := range map[string]string{"empty.json": "[]", "garbled.json": "{", "v6.json": `[{"UE": "2001:db8::1"}]`} {
		bad := filepath.Join(t.TempDir(), name)
		os.WriteFile(bad, []byte(content), 0o644)
		if _, err := parseGen([]string{"-n", "1", "--sessions-file", bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
	}
	if _, err := parseGen([]string{"-n", "1", "--sessions-file", "/nonexistent.json", "--wait", "0s"}); err == nil || !strings.Contains(err.Error(), "upflab smf --json FILE") {
		t.Errorf("no file: %v, want an error saying how to write one", err)
	}
}

// gen (and sink, and cbr) wait for a sessions file that an smf started
// just before has yet to write, up to --wait.
func TestGenWaitsForTheSessionsFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sessions.json")
	list := []smf.Session{{UE: netip.MustParseAddr("10.32.0.1"), UplinkTEID: 0x100, DownlinkTEID: 1, QFI: 9}}
	written := make(chan error, 1)
	time.AfterFunc(300*time.Millisecond, func() { written <- writeSessions(file, list) })
	g, err := parseGen([]string{"-n", "1", "--sessions-file", file, "--wait", "1m"})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if len(g.t.Sessions) != 1 || g.t.Sessions[0].UplinkTEID != 0x100 {
		t.Errorf("sessions %+v, want the file's", g.t.Sessions)
	}
	start := time.Now()
	_, err = parseSink([]string{"--sessions-file", file + ".never", "--wait", "200ms"})
	if err == nil || !strings.Contains(err.Error(), "no such file") || time.Since(start) < 200*time.Millisecond {
		t.Errorf("a file never written: %v after %v, want an error once --wait is up", err, time.Since(start))
	}
}

func TestParseMix(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []scenario.Weighted
	}{
		{"64", []scenario.Weighted{{Bytes: 64, Weight: 1}}},
		{"IMIX", scenario.IMIX},
		{"64:7, 576:4,1400:1", []scenario.Weighted{{Bytes: 64, Weight: 7}, {Bytes: 576, Weight: 4}, {Bytes: 1400, Weight: 1}}},
		{"128,256", []scenario.Weighted{{Bytes: 128, Weight: 1}, {Bytes: 256, Weight: 1}}},
	} {
		if got, err := parseMix(tc.in); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// Flat out a worker on every CPU; at a set rate the fewest that keep it
// up; never more than flows.
func TestGenPlacesWorkers(t *testing.T) {
	all := runtime.NumCPU()
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--sessions", "1"}, 1},
		{[]string{"--sessions", "64"}, min(all, 64)},
		{[]string{"--sessions", "64", "--rate", "100kpps"}, 1},
		{[]string{"--sessions", "64", "--rate", "100kpps", "--workers", "64"}, min(all, 64)},
		{[]string{"--sessions", "1", "--flows", "64", "--workers", "1"}, 1},
		{[]string{"--sessions", "64", "--cpus", "0"}, 1},
	} {
		g, err := parseGen(append(tc.args, "-n", "1"))
		if err != nil || len(g.cpus) != tc.want {
			t.Errorf("%q: CPUs %v, %v; want %d", tc.args, g.cpus, err, tc.want)
		}
	}
}

var labSeq atomic.Int64

// testLab is a lab of its own for a test, taken down when it ends.
func testLab(t *testing.T) topo.Lab {
	t.Helper()
	testenv.RequirePrivileges(t)
	name := fmt.Sprintf("sluicetest-%d-u%d", os.Getpid(), labSeq.Add(1))
	t.Cleanup(func() {
		if err := topo.Down(name); err != nil {
			t.Errorf("tear down: %v", err)
		}
	})
	lab, err := topo.Up(topo.Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// Below saturation, through the reference forwarder, the generator sends
// exactly the count asked (one that two workers cannot share evenly) and
// the sink, given the same sessions and flows, counts every frame once.
func TestPrivilegedGenAndSinkCountEveryFrame(t *testing.T) {
	lab := testLab(t)
	const count = 20001
	for _, dir := range []string{"uplink", "downlink"} {
		t.Run(dir, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			same := []string{"--name", lab.Name, "--direction", dir, "--sessions", "4", "--flows", "2"}
			s, err := parseSink(append(same, "--through", "reference", "--expect", fmt.Sprint(count), "--duration", "10s"))
			if err != nil {
				t.Fatal(err)
			}
			c, err := s.attach(lab)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			g, err := parseGen(append(same, "--count", fmt.Sprint(count), "--rate", "100kpps", "--size", "imix", "--cpus", "0,1"))
			if err != nil {
				t.Fatal(err)
			}
			// The forwarder's egress, whose peer the sink listens on.
			egress := map[string]string{"uplink": topo.DevN6, "downlink": topo.DevN3}[dir]
			fwdBefore, err := tgen.XmitErrors(lab.UPF, egress)
			if err != nil {
				t.Fatal(err)
			}
			var genOut, sinkOut strings.Builder
			res, err := g.run(ctx, &genOut, lab)
			if err != nil {
				t.Fatal(err)
			}
			c.wait(ctx, &sinkOut)
			fwdAfter, err := tgen.XmitErrors(lab.UPF, egress)
			if err != nil {
				t.Fatal(err)
			}
			notTaken := res.NotTaken + fwdAfter - fwdBefore
			if err := c.report(&sinkOut); err != nil {
				t.Error(err)
			}
			t.Logf("gen:\n%s\nsink:\n%s", genOut.String(), sinkOut.String())
			if res.Total() != count || !regexp.MustCompile(`(?m)^ *opackets +\d+ +\d+ +20001$`).MatchString(genOut.String()) {
				t.Errorf("gen sent %d frames, want %d in its opackets total", res.Total(), count)
			}
			// The one loss allowed is a device's own, gen's or the
			// forwarder's (its peer, stalled by the host, too busy to
			// take frames), which the device counts: exactly those are lost.
			summary := regexp.MustCompile(`20001 frames expected \(as --expect says\), (\d+) received, [^,]+ loss, 0 duplicates, 0 reordered \(0 late\)`)
			m := summary.FindStringSubmatch(sinkOut.String())
			if m == nil || m[1] != fmt.Sprint(count-notTaken) {
				t.Errorf("sink: want %d received (%d not taken by gen's device, %d by the forwarder's), 0 duplicates, 0 reordered",
					count-notTaken, res.NotTaken, fwdAfter-fwdBefore)
			}
			if n := strings.Count(sinkOut.String(), ":1000"); n != 8 {
				t.Errorf("sink: %d lines of flows, want the 8", n)
			}
		})
	}
}

// A sink that attaches after gen has started still counts every frame:
// gen waits for it. Started together, as `upflab sink ... &` and `upflab
// gen ...` are, the sink used to miss the first tens of milliseconds.
func TestPrivilegedGenWaitsForTheSink(t *testing.T) {
	lab := testLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const count = 5000
	same := []string{"--name", lab.Name, "--sessions", "2"}
	g, err := parseGen(append(same, "--count", fmt.Sprint(count), "--rate", "50kpps", "--cpus", "0"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseSink(append(same, "--through", "reference", "--expect", fmt.Sprint(count), "--duration", "10s"))
	if err != nil {
		t.Fatal(err)
	}
	var genOut strings.Builder
	sent := make(chan error, 1)
	go func() {
		_, err := g.run(ctx, &genOut, lab)
		sent <- err
	}()
	time.Sleep(500 * time.Millisecond)
	c, err := s.attach(lab)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	c.wait(ctx, io.Discard)
	st, err := c.sink.Stats(nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unique != count || !strings.Contains(genOut.String(), "waiting up to 5s for a sink on "+lab.DN+"/n6") {
		t.Errorf("the sink counted %d of %d frames; gen said:\n%s", st.Unique, count, genOut.String())
	}
}

// A verb given a lab that is not there says how to make it.
func TestPrivilegedVerbsSayHowToMakeALab(t *testing.T) {
	testenv.RequirePrivileges(t)
	name := fmt.Sprintf("sluicetest-%d-none", os.Getpid())
	for _, tc := range []struct {
		verb string
		run  func([]string) error
		args []string
	}{
		{"gen", runGen, []string{"--name", name, "-n", "1"}},
		{"sink", runSink, []string{"--name", name}},
		{"cbr", runCBR, []string{"--name", name}},
	} {
		err := tc.run(tc.args)
		if err == nil || !strings.Contains(err.Error(), "`upflab topo up --name "+name+"` makes it") {
			t.Errorf("%s: %v, want an error saying how to make the lab", tc.verb, err)
		}
	}
}
