package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-upf/sluice/internal/metrics"
)

// listenHTTP binds before it returns, so that an address in use is an
// error at start, and serves until stop.
func TestListenBindsFirst(t *testing.T) {
	h := metrics.Handler(prometheus.NewRegistry())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.MustParseAddrPort(taken.Addr().String())
	if _, err := listenHTTP("metrics", addr, h, log); err == nil || !strings.Contains(err.Error(), "metrics: listen on "+addr.String()) {
		t.Errorf("address in use: %v", err)
	}
	taken.Close()
	stop, err := listenHTTP("metrics", addr, h, log)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr.String() + metrics.Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", metrics.Path, resp.Status)
	}
	stop()
	if _, err := http.Get("http://" + addr.String() + metrics.Path); err == nil {
		t.Error("still serving after stop")
	}
}
