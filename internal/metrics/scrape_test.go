package metrics

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape GETs h's /metrics and returns the body.
func scrape(t testing.TB, h http.Handler) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", Path, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// families parses an exposition in the text format.
func families(t testing.TB, body []byte) map[string]*familyOf {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse the exposition: %v\n%s", err, body)
	}
	out := map[string]*familyOf{}
	for name, mf := range mfs {
		f := &familyOf{help: mf.GetHelp(), typ: mf.GetType().String(), samples: map[string]float64{}}
		for _, m := range mf.GetMetric() {
			var v float64
			switch {
			case m.Counter != nil:
				v = m.Counter.GetValue()
			case m.Gauge != nil:
				v = m.Gauge.GetValue()
			case m.Untyped != nil:
				v = m.Untyped.GetValue()
			}
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			f.samples[name+"{"+strings.Join(labels, ",")+"}"] = v
		}
		out[name] = f
	}
	return out
}

// familyOf is one metric as scraped.
type familyOf struct {
	help, typ string
	samples   map[string]float64 // by name{label="value",…}, labels sorted
}

// samples flattens the families of the UPF (upf_*) into one map.
func upfSamples(fams map[string]*familyOf) map[string]float64 {
	out := map[string]float64{}
	for name, f := range fams {
		if strings.HasPrefix(name, "upf_") {
			for k, v := range f.samples {
				out[k] = v
			}
		}
	}
	return out
}

func newHandler(t testing.TB, src Sources) http.Handler {
	t.Helper()
	reg, err := NewRegistry(src)
	if err != nil {
		t.Fatal(err)
	}
	return Handler(reg)
}

// allParts is a scrape with every part readable: a datapath that has seen
// every drop reason, and a PFCP server with gauges.
func allParts() Sources {
	return Sources{Datapath: fakeDatapath{stats: everyDropReason()}, N4: newFakeN4()}
}

// TestMetricNamesFollowTheConventions lints every metric the UPF exports:
// Prometheus's own rules (promlint), upf_<subsystem>_<name>_<unit>, and a
// help text that names the TS 28.552 measurement, or says there is none.
func TestMetricNamesFollowTheConventions(t *testing.T) {
	body := scrape(t, newHandler(t, allParts()))
	problems, err := lint(body)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s", p)
	}
	fams := families(t, body)
	name := regexp.MustCompile(`^upf_(datapath|pfcp|buffer|state|scrape)_[a-z][a-z0-9_]*[a-z0-9]$`)
	// Units, and the 0-or-1 gauges: success, behind.
	units := regexp.MustCompile(`_(packets|bytes|messages|responses|reports|sessions|associations|records|rewrites|errors|seconds|success|behind)(_total)?$`)
	var upf []string
	for n, f := range fams {
		if !strings.HasPrefix(n, "upf_") {
			continue
		}
		upf = append(upf, n)
		if !name.MatchString(n) {
			t.Errorf("%s: not upf_<subsystem>_<name>_<unit> with a known subsystem", n)
		}
		if !units.MatchString(n) {
			t.Errorf("%s: does not end with its unit", n)
		}
		if (f.typ == "COUNTER") != strings.HasSuffix(n, "_total") {
			t.Errorf("%s: a %s; counters, and only they, end in _total", n, f.typ)
		}
		if !strings.HasPrefix(n, "upf_scrape_") && !strings.Contains(f.help, "TS 28.552") {
			t.Errorf("%s: help %q names no TS 28.552 measurement and does not say there is none", n, f.help)
		}
	}
	// Every metric in the docs and the docs for every metric.
	slices.Sort(upf)
	if want := documented(); !slices.Equal(upf, want) {
		t.Errorf("exported %v,\ndescribed %v", upf, want)
	}
	for _, std := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes", "process_open_fds"} {
		if fams[std] == nil {
			t.Errorf("no %s: the Go and process collectors are missing", std)
		}
	}
}

// TestHelpTextsNameTheMeasurements pins the TS 28.552 measurement each
// metric gives (TS 28.552 §5.4 for the UPF).
func TestHelpTextsNameTheMeasurements(t *testing.T) {
	fams := families(t, scrape(t, newHandler(t, allParts())))
	for _, c := range []struct{ metric, measurement string }{
		{"upf_datapath_receive_packets_total", "GTP.InDataPktN3UPF"},
		{"upf_datapath_transmit_packets_total", "GTP.OutDataPktN3UPF"},
		{"upf_datapath_receive_bytes_total", "GTP.InDataOctN3UPF"},
		{"upf_datapath_transmit_bytes_total", "GTP.OutDataOctN3UPF"},
		{"upf_datapath_receive_bytes_total", "IP.N6IncLinkUsage"},
		{"upf_datapath_transmit_bytes_total", "IP.N6OutLinkUsage"},
		{"upf_pfcp_received_messages_total", "SM.N4SessionEstabReq"},
		{"upf_pfcp_sent_responses_total", "SM.N4SessionEstabFail"},
		{"upf_pfcp_sent_messages_total", "SM.N4SessionReport"},
		{"upf_pfcp_sessions", "SM.SessionNbrMean"},
	} {
		f := fams[c.metric]
		if f == nil {
			t.Errorf("%s is not exported", c.metric)
			continue
		}
		if !strings.Contains(f.help, "TS 28.552 "+c.measurement) {
			t.Errorf("%s: help %q does not name TS 28.552 %s", c.metric, f.help, c.measurement)
		}
	}
}

// TestDocumentedMetrics: docs/metrics.md describes every metric with its
// type and labels as exported.
func TestDocumentedMetrics(t *testing.T) {
	fams := families(t, scrape(t, newHandler(t, allParts())))
	doc := readDoc(t)
	for name, f := range fams {
		if !strings.HasPrefix(name, "upf_") {
			continue
		}
		row := docRow(doc, name)
		if row == "" {
			t.Errorf("docs/metrics.md has no row for %s", name)
			continue
		}
		if !strings.Contains(row, "| "+f.help+" |") {
			t.Errorf("docs/metrics.md: the help of %s is %q; its row says %q", name, f.help, row)
		}
		if typ := strings.ToLower(f.typ); !strings.Contains(row, "| "+typ+" |") {
			t.Errorf("docs/metrics.md: %s is a %s; its row says %q", name, typ, row)
		}
		for _, label := range labelsOf(f) {
			if !strings.Contains(row, "`"+label+"`") {
				t.Errorf("docs/metrics.md: %s has the label %s; its row says %q", name, label, row)
			}
		}
	}
}

func labelsOf(f *familyOf) []string {
	seen := map[string]bool{}
	for k := range f.samples {
		inner := k[strings.Index(k, "{")+1 : len(k)-1]
		for _, kv := range strings.Split(inner, ",") {
			if n, _, ok := strings.Cut(kv, "="); ok {
				seen[n] = true
			}
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TestScrapeReadsEveryPart: what each part reads, as scraped.
func TestScrapeReadsEveryPart(t *testing.T) {
	got := upfSamples(families(t, scrape(t, newHandler(t, allParts()))))
	for key, want := range map[string]float64{
		`upf_datapath_receive_packets_total{interface="n3"}`:                  11,
		`upf_datapath_receive_bytes_total{interface="n3"}`:                    1100,
		`upf_datapath_transmit_packets_total{interface="n6"}`:                 10,
		`upf_datapath_transmit_bytes_total{interface="n6"}`:                   900,
		`upf_datapath_receive_packets_total{interface="n9"}`:                  0,
		`upf_datapath_packets_total{verdict="redirect"}`:                      10,
		`upf_datapath_packets_total{verdict="drop"}`:                          300,
		`upf_datapath_packets_total{verdict="aborted"}`:                       0,
		`upf_datapath_dropped_packets_total{reason="no_pdr"}`:                 9,
		`upf_datapath_dropped_packets_total{reason="adjust"}`:                 24,
		`upf_datapath_dropped_packets_total{reason="drop(99)"}`:               5,
		`upf_pfcp_received_messages_total{message_type="Heartbeat Request"}`:  0,
		`upf_pfcp_sent_messages_total{message_type="Session Report Request"}`: 0,
		`upf_pfcp_received_messages_total{message_type="other"}`:              0,
		`upf_pfcp_session_reports_total{report_type="DLDR"}`:                  0,
		`upf_pfcp_session_reports_total{report_type="UPIR"}`:                  0,
		`upf_pfcp_sessions{}`:                                  1_000_000,
		`upf_pfcp_associations{state="up"}`:                    2,
		`upf_pfcp_associations{state="lost"}`:                  1,
		`upf_buffer_packets{}`:                                 17,
		`upf_buffer_dropped_packets_total{reason="overflow"}`:  3,
		`upf_buffer_dropped_packets_total{reason="discarded"}`: 4,
		`upf_scrape_collector_success{collector="datapath"}`:   1,
		`upf_scrape_collector_success{collector="pfcp"}`:       1,
		`upf_scrape_collector_success{collector="pfcp_state"}`: 1,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (exported: %v), want %v", key, v, ok, want)
		}
	}
	if n, named := len(seriesOf(got, "upf_datapath_dropped_packets_total")), len(dropReasons); n != named+1 {
		t.Errorf("%d drop reasons exported, want the %d the datapath names and the one it does not", n, named)
	}
	accepted := seriesOf(got, "upf_pfcp_sent_responses_total")
	slices.Sort(accepted)
	var want []string
	for _, typ := range []string{"Association Release", "Association Setup", "Association Update", "Session Deletion", "Session Establishment", "Session Modification"} {
		want = append(want, fmt.Sprintf(`upf_pfcp_sent_responses_total{cause="Request accepted (success)",message_type="%s Response"}`, typ))
	}
	if !slices.Equal(accepted, want) {
		t.Errorf("before any response, responses by cause %v; want the acceptances of what the UPF answers, %v", accepted, want)
	}
}

func seriesOf(samples map[string]float64, name string) []string {
	var out []string
	for k := range samples {
		if strings.HasPrefix(k, name+"{") {
			out = append(out, k)
		}
	}
	return out
}

// A part that cannot be read leaves its own metrics out and says so; the
// rest of the scrape stands.
func TestScrapeWithoutAPart(t *testing.T) {
	for _, c := range []struct {
		name    string
		src     Sources
		failed  string
		missing []string // metrics the scrape goes without
		present []string // and those it still has
	}{
		{
			name:    "datapath unreadable",
			src:     Sources{Datapath: fakeDatapath{err: io.ErrUnexpectedEOF}, N4: newFakeN4()},
			failed:  "datapath",
			missing: []string{"upf_datapath_receive_packets_total", "upf_datapath_packets_total", "upf_datapath_dropped_packets_total"},
			present: []string{"upf_pfcp_sessions", "upf_pfcp_received_messages_total"},
		},
		{
			name:    "serve loop busy past StateWait",
			src:     Sources{Datapath: fakeDatapath{stats: everyDropReason()}, N4: &fakeN4{busy: true}, StateWait: 1},
			failed:  "pfcp_state",
			missing: []string{"upf_pfcp_sessions", "upf_pfcp_associations", "upf_buffer_packets"},
			present: []string{"upf_datapath_receive_packets_total", "upf_pfcp_received_messages_total"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			fams := families(t, scrape(t, newHandler(t, c.src)))
			key := fmt.Sprintf("upf_scrape_collector_success{collector=%q}", c.failed)
			if v := fams["upf_scrape_collector_success"].samples[key]; v != 0 || len(fams["upf_scrape_collector_success"].samples) != 3 {
				t.Errorf("%s = %v; collectors %v", key, v, fams["upf_scrape_collector_success"].samples)
			}
			for _, m := range c.missing {
				if fams[m] != nil {
					t.Errorf("%s exported from a part that failed", m)
				}
			}
			for _, m := range c.present {
				if fams[m] == nil {
					t.Errorf("%s missing: one part failing took others with it", m)
				}
			}
		})
	}
}

// Only /metrics is served, and only to GET.
func TestHandlerServesOnlyMetrics(t *testing.T) {
	h := newHandler(t, allParts())
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/metrics", http.StatusOK},
		{http.MethodHead, "/metrics", http.StatusOK},
		{http.MethodPost, "/metrics", http.StatusMethodNotAllowed},
		{http.MethodGet, "/", http.StatusNotFound},
		{http.MethodGet, "/metrics/x", http.StatusNotFound},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, rec.Code, c.want)
		}
	}
}
