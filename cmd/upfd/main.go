// Command upfd is the Sluice user plane function: XDP fast path, PFCP on N4.
//
//	upfd [flags]          run
//	upfd check [flags]    check the configuration and this host for it, then exit
//	upfd version          print the version and exit
//
// The configuration is the defaults, then a YAML file (--config FILE or
// UPFD_CONFIG), then UPFD_ variables, then flags, each over the one before
// (internal/config; upfd --help lists every flag).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	gopfcp "github.com/wmnsk/go-pfcp"

	"github.com/sluice-upf/sluice/internal/api"
	"github.com/sluice-upf/sluice/internal/buildinfo"
	"github.com/sluice-upf/sluice/internal/config"
	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/gtpu"
	"github.com/sluice-upf/sluice/internal/metrics"
	"github.com/sluice-upf/sluice/internal/pfcp"
	"github.com/sluice-upf/sluice/internal/rules"
	"github.com/sluice-upf/sluice/internal/session"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "version" {
		fmt.Println("upfd", buildinfo.Version())
		return
	}
	check := len(args) > 0 && args[0] == "check"
	if check {
		args = args[1:]
	}
	cfg, err := load(args, os.Environ())
	switch {
	case errors.Is(err, config.ErrHelp):
		usage(os.Stdout)
		return
	case err != nil:
		fmt.Fprintln(os.Stderr, "upfd:", err)
		os.Exit(2)
	case check:
		fmt.Printf("upfd: configuration is valid (%s)\n", sources(cfg))
		return
	}
	log := newLogger(cfg.Log)
	log.Info("upfd: configuration read", "from", sources(cfg))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("upfd: " + err.Error())
		os.Exit(1)
	}
}

// load reads the configuration from the defaults, the file, the UPFD_
// variables of env and the flags of args, then checks it against this
// host (devices, addresses and ports, the BPF file system), so that upfd
// and upfd check refuse the same.
func load(args, env []string) (*config.Config, error) {
	cfg, rest, err := config.Load(args, env)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("unexpected %q; write upfd [flags], upfd check [flags] or upfd version (upfd --help lists the flags)", rest[0])
	}
	if err := cfg.CheckHost(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// usage is upfd --help.
func usage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  upfd [flags]          run: attach the datapath, serve N4 on pfcp.listen; SIGTERM stops it
  upfd check [flags]    check the configuration, and this host for it, then exit (status 2 on a problem)
  upfd version          print the version and exit

Every key of the configuration file is also a flag (--pfcp.t1) and an environment
variable (UPFD_PFCP_T1), whose value is written as in the file: lists as [a, b] or a,b;
interfaces and dnns as YAML, [{name: n3, ...}, ...]. Flags win over variables, variables
over the file, the file over the defaults shown here. docs/configuration.md is the reference.

Flags:
`)
	config.Usage(w)
}

// sources says where the configuration came from, for the log: the file,
// the variables and flags (never their values, which may be secret).
func sources(cfg *config.Config) string {
	if list := cfg.Sources(); len(list) > 0 {
		return strings.Join(list, ", ")
	}
	return "the defaults"
}

// newLogger logs to standard error at the level and in the format of l.
func newLogger(l config.Log) *slog.Logger {
	// go-pfcp writes lines of its own through the standard logger, in no
	// format of ours; what it would say, upfd logs itself.
	gopfcp.DisableLogging()
	opts := &slog.HandlerOptions{Level: l.SlogLevel()}
	if l.Format == config.FormatJSON {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// run wires the datapath, the session store, the rule compiler and the
// PFCP server, serves until ctx ends, then takes the programs off, or,
// with pinning, leaves them forwarding, N4's state in the state file for
// the next process.
func run(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	ifaces, access, core := interfaces(cfg)
	endpoints := append(slices.Clone(access), core...)
	opts := datapath.Options{Interfaces: ifaces, GTPUAddrs: endpoints, MaxSessions: cfg.MaxSessions, PinPath: cfg.PinPath,
		Listeners: listeners(cfg)}
	began := time.Now()
	pins, err := loadDatapath(opts, cfg.StateFile, log)
	if err != nil {
		return err
	}
	d := pins.d
	defer func() { d.Close() }()
	if pins.j != nil {
		defer pins.j.Close()
	}
	// Taking over, N4 serves first, on the maps, while the kernel verifies
	// the new programs: the old ones forward meanwhile. Otherwise there is
	// nothing to serve until they are attached.
	attached := func() error {
		mode, err := loadAndAttach(d, cfg.XDPMode, log)
		if err != nil {
			return err
		}
		log.Info("upfd: datapath attached", "interfaces", len(ifaces), "mode", mode, "max_sessions", cfg.MaxSessions,
			"pinned", cfg.PinPath != "", "taken_over", pins.taken != nil, "took", time.Since(began).Round(time.Millisecond))
		return nil
	}
	if pins.taken == nil {
		if err := attached(); err != nil {
			return err
		}
	}

	pools := map[string][]netip.Prefix{}
	for i, dnn := range cfg.DNNs {
		pools[dnn.Name] = dnn.Pools
		if i == 0 {
			pools[""] = dnn.Pools // a PDI without a network instance takes the first DNN's
		}
	}
	store := session.NewStore(session.Options{TEIDFirst: cfg.TEIDRange.First, TEIDLast: cfg.TEIDRange.Last,
		AccessAddrs: access, CoreAddrs: core, Pools: pools, MaxSessions: cfg.MaxSessions, MaxPDRs: cfg.MaxPDRsPerSession,
		GBRCapacity: session.BitRates{UL: cfg.GBRCapacity.Uplink, DL: cfg.GBRCapacity.Downlink}})
	compiler := rules.NewCompiler(rules.Interfaces{Endpoints: endpoints, Access: access, Core: core}, d.Sizes())
	// One GTP-U socket per local address: each message leaves from its path's.
	gtp, err := gtpu.Open(gtpu.Addrs{Access: access, Core: core})
	if err != nil {
		return err
	}
	defer gtp.Close()
	peers, err := cfg.PeerNetworks()
	if err != nil {
		return err
	}
	if len(cfg.PFCP.Peers) == 0 {
		log.Info("upfd: pfcp.peers is empty: taking requests from SMFs on pfcp.listen's own networks", "networks", peers)
	}
	srv, err := pfcp.New(pfcp.Config{
		NodeID: cfg.NodeID, Listen: cfg.PFCP.Listen, Peers: peers, Recovery: time.Now(),
		T1: cfg.PFCP.T1, N1: cfg.PFCP.N1,
		Heartbeat: cfg.PFCP.HeartbeatInterval, HeartbeatRetries: cfg.PFCP.HeartbeatRetries, PeerGrace: cfg.PFCP.PeerGrace,
		Associate: cfg.PFCP.Associate,
		GTPU:      gtp, EchoInterval: cfg.GTPU.EchoInterval, EchoRetries: cfg.GTPU.EchoRetries,
		BufferPackets: cfg.Buffer.PacketsPerSession, BufferTotal: cfg.Buffer.TotalPackets,
		// Pinned, the sessions outlive the process: nothing is final.
		FinalReports: cfg.PinPath == "",
	}, store, compiler, d, log)
	if err != nil {
		return err
	}
	if err := pins.takeOver(srv, cfg.StateFile, log); err != nil {
		return err
	}
	if err := pins.keep(srv, cfg.StateFsync); err != nil {
		return err
	}
	if cfg.API.Listen.IsValid() { // after restore: the API shows the restored state
		h := api.New(api.Options{N4: srv, Datapath: d, Version: buildinfo.Version(), Token: cfg.API.Token, Log: log})
		stopAPI, err := listenHTTP("api", cfg.API.Listen, h, log)
		if err != nil {
			return err
		}
		defer stopAPI()
		log.Info("upfd: serving the REST API", "listen", cfg.API.Listen, "writes", cfg.API.Token != "")
	}
	if cfg.Metrics.Listen.IsValid() {
		reg, err := metrics.NewRegistry(metrics.Sources{Datapath: d, N4: srv})
		if err != nil {
			return err
		}
		stopMetrics, err := listenHTTP("metrics", cfg.Metrics.Listen, metrics.Handler(reg), log)
		if err != nil {
			return err
		}
		defer stopMetrics()
		log.Info("upfd: serving Prometheus", "url", "http://"+cfg.Metrics.Listen.String()+metrics.Path)
	}
	log.Info("upfd: serving N4", "listen", cfg.PFCP.Listen, "node_id", cfg.NodeID, "sessions", store.Len(),
		"took", time.Since(began).Round(time.Millisecond))
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	if pins.taken != nil {
		if err := attached(); err != nil {
			stop(err)
		}
	}
	err = <-served
	log.Info("upfd: stopping")
	if cfg.PinPath != "" {
		log.Info("upfd: state kept; the pinned datapath forwards on", "sessions", store.Len(), "state_file", cfg.StateFile)
	}
	if errors.Is(err, context.Canceled) {
		return context.Cause(ctx) // nil, unless the programs failed
	}
	return err
}

// interfaces are the datapath's devices and the GTP-U addresses toward
// the access (N3) and the core (N9).
func interfaces(cfg *config.Config) (ifaces []datapath.Interface, access, core []netip.Addr) {
	for _, i := range cfg.Interfaces {
		role := map[string]datapath.Role{config.RoleN3: datapath.N3, config.RoleN6: datapath.N6, config.RoleN9: datapath.N9}[i.Role]
		ifaces = append(ifaces, datapath.Interface{Name: i.Name, Role: role, MTU: i.MTU})
		switch i.Role {
		case config.RoleN3:
			access = append(access, i.Address)
		case config.RoleN9:
			core = append(core, i.Address)
		}
	}
	return ifaces, access, core
}

// listeners are upfd's sockets besides GTP-U, which the datapath keeps
// the data network from.
func listeners(cfg *config.Config) []datapath.Listener {
	ls := []datapath.Listener{{Network: "udp", Port: cfg.PFCP.Listen.Port()}}
	for _, l := range []netip.AddrPort{cfg.API.Listen, cfg.Metrics.Listen} {
		if l.IsValid() {
			ls = append(ls, datapath.Listener{Network: "tcp", Port: l.Port()})
		}
	}
	return ls
}

// loadAndAttach loads the programs and attaches them in the configured
// mode; auto is native where the driver has it, generic elsewhere.
func loadAndAttach(d *datapath.Datapath, mode string, log *slog.Logger) (string, error) {
	if err := d.LoadPrograms(); err != nil {
		return "", err
	}
	if mode != config.XDPAuto {
		return mode, d.Attach(datapath.XDPMode(mode))
	}
	err := d.Attach(datapath.Native)
	if err == nil {
		return config.XDPNative, nil
	}
	log.Warn("upfd: native XDP failed; attaching in generic mode (slower)", "err", err)
	return config.XDPGeneric, d.Attach(datapath.Generic)
}
