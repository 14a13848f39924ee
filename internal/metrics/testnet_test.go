package metrics

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/pfcp"
	"github.com/sluice-upf/sluice/internal/rules"
	"github.com/sluice-upf/sluice/internal/session"
)

// Addresses of testenv's UPF namespace and what lies around it.
var (
	addrN3  = netip.MustParseAddr("198.18.3.2")
	addrN6  = netip.MustParseAddr("198.18.6.2")
	addrGNB = netip.MustParseAddr("198.18.3.1")
	addrDN  = netip.MustParseAddr("198.18.7.10")
	addrSMF = netip.MustParseAddr("198.18.4.1")
	addrN4  = netip.MustParseAddr("198.18.4.2")
)

// loadDatapath loads a datapath for n3 and n6 inside ns, sized for
// maxSessions, closed when the test ends.
func loadDatapath(tb testing.TB, ns string, maxSessions int) *datapath.Datapath {
	tb.Helper()
	var d *datapath.Datapath
	err := netns.Do(ns, func() (err error) {
		d, err = datapath.Load(datapath.Options{
			Interfaces: []datapath.Interface{{Name: "n3", Role: datapath.N3}, {Name: "n6", Role: datapath.N6}},
			GTPUAddrs:  []netip.Addr{addrN3}, MaxSessions: maxSessions,
		})
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// startN4 serves N4 on listen inside ns (the socket stays there) until
// the test ends: UEs from pool, TEIDs chosen from 0x100 up.
func startN4(tb testing.TB, ns string, listen netip.AddrPort, d *datapath.Datapath, maxSessions int, pool netip.Prefix) *pfcp.Server {
	tb.Helper()
	store := session.NewStore(session.Options{TEIDFirst: 0x100, TEIDLast: 0xffff_ffff, AccessAddrs: []netip.Addr{addrN3},
		Pools: map[string][]netip.Prefix{"internet": {pool}}, MaxSessions: maxSessions})
	compiler := rules.NewCompiler(rules.Interfaces{Endpoints: []netip.Addr{addrN3}, Access: []netip.Addr{addrN3}}, d.Sizes())
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := pfcp.Config{NodeID: addrN4.String(), Listen: listen, Recovery: time.Unix(1_700_000_000, 0)}
	var srv *pfcp.Server
	err := netns.Do(ns, func() (err error) {
		srv, err = pfcp.New(cfg, store, compiler, d, log)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	tb.Cleanup(func() { cancel(); <-done })
	return srv
}
