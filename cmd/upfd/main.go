// Command upfd is the Sluice user plane function: XDP fast path, PFCP on N4.
//
//	upfd [--config FILE]          run
//	upfd check [--config FILE]    validate the configuration and exit
//	upfd version                  print the version and exit
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/sluice-upf/sluice/internal/config"
	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/gtpu"
	"github.com/sluice-upf/sluice/internal/pfcp"
	"github.com/sluice-upf/sluice/internal/rules"
	"github.com/sluice-upf/sluice/internal/session"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "version" {
		fmt.Println("upfd", version())
		return
	}
	check := len(args) > 0 && args[0] == "check"
	if check {
		args = args[1:]
	}
	fs := flag.NewFlagSet("upfd", flag.ExitOnError)
	path := fs.String("config", "", "configuration file (YAML); without one, the lab's defaults")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	fs.Parse(args)
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "upfd: unexpected %q: upfd [--config FILE], upfd check [--config FILE] or upfd version\n", fs.Arg(0))
		os.Exit(2)
	}

	cfg, err := load(*path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "upfd:", err)
		os.Exit(2)
	}
	if check {
		fmt.Println("upfd: configuration is valid")
		return
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(os.Stderr, "upfd: --log-level %q: want debug, info, warn or error\n", *level)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("upfd: " + err.Error())
		os.Exit(1)
	}
}

func load(path string) (*config.Config, error) {
	if path == "" {
		return config.Default(), nil
	}
	return config.Load(path)
}

// run wires the datapath, the session store, the rule compiler and the
// PFCP server, serves until ctx ends, then takes the programs off.
func run(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	var ifaces []datapath.Interface
	var access, core, endpoints []netip.Addr
	for _, i := range cfg.Interfaces {
		role := map[string]datapath.Role{config.RoleN3: datapath.N3, config.RoleN6: datapath.N6, config.RoleN9: datapath.N9}[i.Role]
		ifaces = append(ifaces, datapath.Interface{Name: i.Name, Role: role})
		switch i.Role {
		case config.RoleN3:
			access = append(access, i.Address)
		case config.RoleN9:
			core = append(core, i.Address)
		}
	}
	endpoints = append(append(endpoints, access...), core...)
	d, err := datapath.Load(datapath.Options{Interfaces: ifaces, GTPUAddrs: endpoints, MaxSessions: cfg.MaxSessions})
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Attach(datapath.XDPMode(cfg.XDPMode)); err != nil {
		return err
	}
	log.Info("upfd: datapath attached", "interfaces", len(ifaces), "mode", cfg.XDPMode, "max_sessions", cfg.MaxSessions)

	pools := map[string][]netip.Prefix{}
	for i, dnn := range cfg.DNNs {
		pools[dnn.Name] = dnn.Pools
		if i == 0 {
			pools[""] = dnn.Pools // a PDI without a network instance takes the first DNN's
		}
	}
	store := session.NewStore(session.Options{TEIDFirst: cfg.TEIDRange.First, TEIDLast: cfg.TEIDRange.Last,
		AccessAddrs: access, CoreAddrs: core, Pools: pools, MaxSessions: cfg.MaxSessions})
	compiler := rules.NewCompiler(rules.Interfaces{Endpoints: endpoints, Access: access, Core: core}, d.Sizes())
	gtp, err := gtpu.Listen(access[0])
	if err != nil {
		return err
	}
	defer gtp.Close()
	srv, err := pfcp.New(pfcp.Config{
		NodeID: cfg.NodeID, Listen: cfg.PFCP.Listen, Peers: cfg.PFCP.Peers, Recovery: time.Now(),
		T1: cfg.PFCP.T1, N1: cfg.PFCP.N1,
		Heartbeat: cfg.PFCP.HeartbeatInterval, HeartbeatRetries: cfg.PFCP.HeartbeatRetries, PeerGrace: cfg.PFCP.PeerGrace,
		Associate: cfg.PFCP.Associate,
		GTPU:      gtp, EchoInterval: cfg.GTPU.EchoInterval, EchoRetries: cfg.GTPU.EchoRetries,
		BufferPackets: cfg.Buffer.PacketsPerSession, BufferTotal: cfg.Buffer.TotalPackets,
		FinalReports: true,
	}, store, compiler, d, log)
	if err != nil {
		return err
	}
	log.Info("upfd: serving N4", "listen", cfg.PFCP.Listen, "node_id", cfg.NodeID)
	err = srv.Serve(ctx)
	log.Info("upfd: stopping")
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// version is the module version and VCS revision the binary was built
// from, as Go records them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			v += " " + s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			v += "+dirty"
		}
	}
	return v
}
