package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sluice-upf/sluice/internal/config"
	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/lab/refs"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/topo"
)

// process is a UPF under test running in the lab's UPF namespace, in a
// process group of its own: a command UPF's shell and the UPF it starts
// get SIGTERM together, and the terminal's Ctrl-C reaches upflab only,
// which then stops the UPF as at the end of a run. A restart starts the
// same command line again.
type process struct {
	lab  topo.Lab
	argv []string
	// enter starts it with nsenter into the namespace's network only,
	// rather than with ip netns exec, which mounts a /sys of its own: the
	// bpffs at /sys/fs/bpf, where a pinned UPF keeps its programs and
	// maps across a restart, would be out of its sight.
	enter bool
	// pins and state, when set, are upfd's pin directory and state file,
	// the lab's own: the final stop removes them.
	pins, state string
	log         *os.File   // upf.log, of every process started
	cmd         *exec.Cmd  // the one running now
	done        chan error // its Wait's result, once
}

// startUPF starts the scenario's UPF (upfd or a command) in the UPF
// namespace, its output to upf.log in dir. A scenario that restarts the
// UPF has upfd pinned throughout, and every UPF started with nsenter. The
// reference forwarder is not a process: see attachReference.
func startUPF(lab topo.Lab, s *scenario.Scenario, upfd, dir string) (*process, string, error) {
	u := s.UPF
	p := &process{lab: lab, enter: s.Restarts()}
	cfgPath := filepath.Join(dir, "upf.yaml")
	switch u.Kind {
	case scenario.UPFBuiltIn:
		// Absent keys take upfd's defaults, which fit the lab but for
		// the UE pools: the scenario's overrides are a whole upfd.yaml.
		config, err := withLabPools(u.Config)
		if err == nil {
			config, err = p.pinned(config, dir)
		}
		if err != nil {
			return nil, "", err
		}
		if err := os.WriteFile(cfgPath, config, 0o644); err != nil {
			return nil, "", err
		}
		p.argv = []string{upfd, "--config", cfgPath}
	case scenario.UPFCommand:
		b := scenario.LabBindings(lab.Name, cfgPath)
		if err := os.WriteFile(cfgPath, u.ConfigText(b), 0o644); err != nil {
			return nil, "", err
		}
		p.argv = u.CommandLine(b)
	default:
		return nil, "", fmt.Errorf("runner: no process for a UPF of kind %q", u.Kind)
	}
	log, err := os.Create(filepath.Join(dir, "upf.log"))
	if err != nil {
		return nil, "", err
	}
	p.log = log
	if err := p.start(); err != nil {
		log.Close()
		return nil, "", err
	}
	return p, strings.Join(p.argv, " "), nil
}

// pinDir is where upfd pins in the lab called lab, for a restart.
func pinDir(lab string) string { return filepath.Join(config.BPFFS, "upflab-"+lab) }

// pinned adds pin_path and state_file to upfd's config overrides when the
// scenario restarts it (the scenario refuses overrides that set them),
// after removing what a run that did not end may have left pinned there.
func (p *process) pinned(overrides []byte, dir string) ([]byte, error) {
	if !p.enter {
		return overrides, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	p.pins, p.state = pinDir(p.lab.Name), filepath.Join(abs, "upfd-state.journal")
	if err := p.removeLeftovers(); err != nil {
		return nil, err
	}
	return withKeys(overrides, []setting{{"pin_path", p.pins}, {"state_file", p.state}})
}

// withLabPools gives upfd the lab's UE pools (topo.UEPool, UEPoolV6) as
// the pools of the SMF emulator's DNN, unless the overrides set dnns:
// upfd's default pool, 10.45.0.0/16, holds too few UEs for the lab.
func withLabPools(overrides []byte) ([]byte, error) {
	type dnn struct {
		Name  string   `yaml:"name"`
		Pools []string `yaml:"pools"`
	}
	pools := []dnn{{Name: smf.DefaultDNN, Pools: []string{topo.UEPool.String(), topo.UEPoolV6.String()}}}
	return withKeys(overrides, []setting{{"dnns", pools}})
}

// setting is a top-level key of upfd.yaml and its value.
type setting struct {
	key   string
	value any
}

// withKeys adds to a YAML mapping (nil is an empty one), in whatever style
// it is written, those of the settings whose keys it does not have.
func withKeys(mapping []byte, settings []setting) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(mapping, &doc); err != nil {
		return nil, fmt.Errorf("runner: upf.config: %w", err)
	}
	if len(doc.Content) == 0 {
		doc.Content = []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}
	}
	m := doc.Content[0]
	for _, s := range settings {
		if hasKey(m, s.key) {
			continue
		}
		var value yaml.Node
		if err := value.Encode(s.value); err != nil {
			return nil, fmt.Errorf("runner: upf.config: %s: %w", s.key, err)
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.key}, &value)
	}
	return yaml.Marshal(m)
}

// hasKey says whether mapping m has key.
func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// start starts the UPF's command line, in the UPF's namespace.
func (p *process) start() error {
	cmd := p.lab.Command(p.lab.UPF, p.argv[0], p.argv[1:]...)
	if p.enter {
		// nsenter, like ip netns exec, execs the command in place.
		cmd = exec.Command("nsenter", append([]string{"--net=" + filepath.Join(netns.Dir, p.lab.UPF)}, p.argv...)...)
	}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	done := make(chan error, 1)
	p.cmd, p.done = cmd, done
	if err := cmd.Start(); err != nil {
		done <- err
		return fmt.Errorf("runner: start the UPF (%s): %w", strings.Join(p.argv, " "), err)
	}
	go func() { done <- cmd.Wait() }()
	return nil
}

// pid is the UPF's process, and its process group; 0 if it did not start.
func (p *process) pid() int {
	if p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// exited says whether the UPF has gone, and why.
func (p *process) exited() (bool, error) {
	select {
	case err := <-p.done:
		p.done <- err
		return true, err
	default:
		return false, nil
	}
}

// stop ends the UPF for good (see terminate) and removes its pins and
// state file: upfd pinned leaves its programs forwarding when it exits,
// until the pins go.
func (p *process) stop(grace time.Duration) error {
	defer p.log.Close()
	_, err := p.terminate(grace)
	return errors.Join(err, p.removeLeftovers())
}

// terminate asks the UPF to end (SIGTERM to its process group: upfd sends
// its final reports and detaches, or, pinned, saves its state) and waits
// until the whole group has gone, killing what is left after grace. exit
// is how the UPF's process ended; err says that it had to be killed.
func (p *process) terminate(grace time.Duration) (exit error, err error) {
	deadline := time.Now().Add(grace)
	if p.pid() == 0 {
		_, exit = p.exited()
		return exit, nil
	}
	pgid := p.pid()
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case exit = <-p.done:
		p.done <- exit
	case <-time.After(grace):
	}
	// The shell of a command UPF may go before the UPF it started.
	for groupAlive(pgid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if gone, _ := p.exited(); gone && !groupAlive(pgid) {
		return exit, nil
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	exit = <-p.done
	p.done <- exit
	return exit, fmt.Errorf("runner: the UPF did not end within %v of SIGTERM: killed", grace)
}

// kill ends the UPF's process group with SIGKILL, as a crash would, and
// waits until the kernel has reaped the UPF; exit is how it ended.
func (p *process) kill() (exit error) {
	if p.pid() == 0 {
		_, exit = p.exited()
		return exit
	}
	syscall.Kill(-p.pid(), syscall.SIGKILL)
	exit = <-p.done
	p.done <- exit
	return exit
}

// groupAlive says whether a process of the group pgid is still there.
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

// removeLeftovers removes upfd's pins and state file, if it was pinned:
// the pinned programs are detached once their links' pins are gone.
func (p *process) removeLeftovers() error {
	var errs []error
	if p.pins != "" {
		errs = append(errs, os.RemoveAll(p.pins))
	}
	if p.state != "" {
		if err := os.Remove(p.state); !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("runner: remove upfd's pins: %w", err)
	}
	return nil
}

// attachReference puts the reference forwarder on the UPF's n3 and n6.
func attachReference(lab topo.Lab) (*refs.Forwarder, error) {
	var f *refs.Forwarder
	err := lab.Do(lab.UPF, func() (err error) {
		f, err = refs.Load(refs.Port{Name: topo.DevN3, Peer: topo.MACGNBN3}, refs.Port{Name: topo.DevN6, Peer: topo.MACDNN6})
		if err != nil {
			return err
		}
		if err = f.Attach(); err != nil {
			f.Close()
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("runner: reference forwarder: %w", err)
	}
	return f, nil
}

// waitFor retries try every 100 ms until it succeeds, the UPF exits or
// the time is up.
func waitFor(ctx context.Context, p *process, limit time.Duration, try func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		attempt, stop := context.WithTimeout(ctx, time.Second)
		err := try(attempt)
		stop()
		if err == nil {
			return nil
		}
		if p != nil {
			if gone, why := p.exited(); gone {
				return fmt.Errorf("the UPF exited (%v) before it answered: see upf.log", why)
			}
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("no answer within %v", limit), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
