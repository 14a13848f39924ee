// Package metrics exposes the UPF to Prometheus at /metrics.
//
// Everything is read when Prometheus scrapes: the datapath's per-CPU
// counters (a few dozen map lookups), the PFCP server's message counters
// (atomics), and what the serve loop holds (sessions, associations,
// buffered frames), asked of it between two requests. Nothing is counted
// in Go per packet, and nothing is kept per session: a scrape costs the
// same with one session or a million.
//
// Names follow upf_<subsystem>_<name>_<unit>; each help text names the
// TS 28.552 measurement the metric gives, where there is one
// (docs/metrics.md lists them all).
package metrics

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/pfcp"
)

// Datapath is what a scrape reads of the datapath.
type Datapath interface {
	Stats() (datapath.Stats, error)
}

// N4 is what a scrape reads of the PFCP server.
type N4 interface {
	Stats() *pfcp.Stats
	Gauges(ctx context.Context) (pfcp.Gauges, error)
}

// DefaultStateWait bounds how long a scrape waits for the PFCP serve loop
// to finish the request in hand; a request takes tens of microseconds.
const DefaultStateWait = 250 * time.Millisecond

// Sources are what the metrics are read from.
type Sources struct {
	Datapath Datapath // nil: no datapath metrics
	N4       N4       // nil: no PFCP, session, association or buffer metrics
	// StateWait bounds the wait for the serve loop (0: DefaultStateWait).
	// Past it the scrape goes without the gauges of that part, and
	// upf_scrape_collector_success{collector="pfcp_state"} says so.
	StateWait time.Duration
}

// NewRegistry registers the UPF's collector with Go's runtime and the
// process's collectors.
func NewRegistry(src Sources) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{
		newCollector(src),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: register: %w", err)
		}
	}
	return reg, nil
}

// Path is where the metrics are served.
const Path = "/metrics"

// Handler serves the registry's metrics at Path, and nothing else.
func Handler(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+Path, promhttp.HandlerFor(g, promhttp.HandlerOpts{
		// A part that cannot be read leaves its metrics out, not the scrape.
		ErrorHandling: promhttp.ContinueOnError,
	}))
	return mux
}
