package metrics

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/testenv"
	labsmf "github.com/sluice-upf/sluice/lab/smf"
)

// BenchmarkScrape measures what a Prometheus scrape of /metrics costs with
// a real datapath and N4 server: empty, then with SLUICE_BENCH_SESSIONS
// sessions (default 1,000,000) established through N4 by the lab's SMF,
// just after and again 32 s later (the server's responses kept for
// retransmission gone), and prints a table:
//
//	go test -run '^$' -bench '^BenchmarkScrape$' -benchtime 1x -timeout 30m ./internal/metrics
//
// Each figure is over benchScrapes scrapes in a row through the handler
// (what promhttp does for Prometheus, without the network): the time of
// one, the bytes of the exposition, and the bytes the scrape allocates.
func BenchmarkScrape(b *testing.B) {
	n := benchSessions(b)
	capacity := n + n/64
	ns := testenv.UPF(b)
	d := loadDatapath(b, ns, capacity)
	srv := startN4(b, "", netip.MustParseAddrPort("127.0.0.1:0"), d, capacity, netip.MustParsePrefix("10.0.0.0/8"))
	h := newHandler(b, Sources{Datapath: d, N4: srv})

	empty := measureScrapes(b, h)
	b.Logf("no sessions: %v", empty)
	start := time.Now()
	fill(b, srv.Addr(), n)
	b.Logf("%d sessions established through N4 in %v", n, time.Since(start).Round(time.Second))
	full := measureScrapes(b, h)
	b.Logf("%d sessions, just established: %v", n, full)
	// The server keeps each response 30 s for retransmissions and walks
	// them every second: measured again once they are gone, as it runs.
	time.Sleep(32 * time.Second)
	steady := measureScrapes(b, h)
	b.Logf("%d sessions, 32 s later: %v", n, steady)

	b.ReportMetric(steady.p50, "ms/scrape")
	b.ReportMetric(float64(steady.body), "B/exposition")
	b.ReportMetric(steady.allocated, "B-alloc/scrape")
	fmt.Printf("\n| sessions | scrape ms p50 | p99 | UPF part ms p50 | p99 | of it, serve loop ms p50 | p99 | exposition bytes | series | bytes allocated |\n")
	fmt.Printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range []struct {
		sessions string
		s        scrapeCost
	}{{"none", empty}, {fmt.Sprintf("%d, just established", n), full}, {fmt.Sprintf("%d, 32 s later", n), steady}} {
		fmt.Printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %d | %d | %.0f |\n", r.sessions, r.s.p50, r.s.p99,
			r.s.upf50, r.s.upf99, r.s.state50, r.s.state99, r.s.body, r.s.series, r.s.allocated)
	}
	fmt.Printf("\nMedians and 99th percentiles of %d scrapes in a row through the handler, Go and process collectors included; "+
		"the UPF part is the sum of upf_scrape_collector_duration_seconds, the serve loop its pfcp_state.\n", benchScrapes)
}

const benchScrapes = 200

func benchSessions(b *testing.B) int {
	s := os.Getenv("SLUICE_BENCH_SESSIONS")
	if s == "" {
		return 1_000_000
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("SLUICE_BENCH_SESSIONS=%q: want a number of sessions", s)
	}
	return n
}

// scrapeCost is what benchScrapes scrapes cost, in milliseconds and bytes.
type scrapeCost struct {
	p50, p99 float64 // a whole scrape
	// upf50, upf99: the UPF's own part, the sum of
	// upf_scrape_collector_duration_seconds; state50, state99: of it,
	// asking the serve loop (pfcp_state), which waits for the request or
	// timer in hand.
	upf50, upf99, state50, state99 float64
	body, series                   int
	allocated                      float64 // per scrape
}

func (c scrapeCost) String() string {
	return fmt.Sprintf("p50 %.2f ms, p99 %.2f ms; UPF part p50 %.2f ms, p99 %.2f ms; serve loop p50 %.2f ms, p99 %.2f ms; %d bytes in %d series, %.0f bytes allocated",
		c.p50, c.p99, c.upf50, c.upf99, c.state50, c.state99, c.body, c.series, c.allocated)
}

func measureScrapes(b *testing.B, h http.Handler) scrapeCost {
	b.Helper()
	scrape(b, h) // warm: the first builds what later ones reuse
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	took := make([]float64, benchScrapes)
	bodies := make([][]byte, benchScrapes)
	for i := range took {
		start := time.Now()
		bodies[i] = scrape(b, h)
		took[i] = float64(time.Since(start).Nanoseconds()) / 1e6
	}
	runtime.ReadMemStats(&after)
	c := scrapeCost{
		body:      len(bodies[0]),
		allocated: float64(after.TotalAlloc-before.TotalAlloc) / benchScrapes,
	}
	c.p50, c.p99 = quantiles(took)
	upf, state := make([]float64, len(bodies)), make([]float64, len(bodies))
	for i, body := range bodies {
		fams := families(b, body)
		for k, ok := range fams["upf_scrape_collector_success"].samples {
			if ok != 1 {
				b.Fatalf("scrape %d: %s = 0", i, k)
			}
		}
		for k, v := range fams["upf_scrape_collector_duration_seconds"].samples {
			upf[i] += v * 1e3
			if strings.Contains(k, `"`+partPFCPState+`"`) {
				state[i] = v * 1e3
			}
		}
		if i == 0 {
			for _, f := range fams {
				c.series += len(f.samples)
			}
		}
	}
	c.upf50, c.upf99 = quantiles(upf)
	c.state50, c.state99 = quantiles(state)
	return c
}

// quantiles are the median and the 99th percentile.
func quantiles(v []float64) (p50, p99 float64) {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2], s[len(s)*99/100]
}

// fill establishes n sessions through N4 with the lab's SMF (plain
// sessions, 128 requests in flight).
func fill(b *testing.B, upf netip.AddrPort, n int) {
	b.Helper()
	c, err := labsmf.Dial(labsmf.Config{Local: netip.MustParseAddrPort("127.0.0.1:0"), UPF: upf, Window: 128,
		UEPool: netip.MustParsePrefix("10.0.0.0/8")})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if err := c.Associate(ctx); err != nil {
		b.Fatal(err)
	}
	const step = 100_000
	for done := 0; done < n; done += step {
		phases, err := c.Establish(ctx, min(step, n-done))
		if err != nil {
			b.Fatalf("after %d sessions: %v", done, err)
		}
		b.Logf("%d sessions: %v", done+min(step, n-done), phases[0])
	}
}
