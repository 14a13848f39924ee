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

	"github.com/sluice-upf/sluice/lab/refs"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/topo"
)

// process is a UPF under test running in the lab's UPF namespace.
type process struct {
	cmd  *exec.Cmd
	log  *os.File
	done chan error // Wait's result, once
}

// startUPF starts the scenario's UPF (upfd or a command) in the UPF
// namespace, its output to upf.log in dir. The reference forwarder is not
// a process: see attachReference.
func startUPF(lab topo.Lab, u scenario.UPF, upfd, dir string) (*process, string, error) {
	cfgPath := filepath.Join(dir, "upf.yaml")
	var argv []string
	switch u.Kind {
	case scenario.UPFBuiltIn:
		// Absent keys take upfd's defaults, which fit the lab: the
		// scenario's overrides are a whole upfd.yaml.
		if err := os.WriteFile(cfgPath, u.Config, 0o644); err != nil {
			return nil, "", err
		}
		argv = []string{upfd, "--config", cfgPath}
	case scenario.UPFCommand:
		b := scenario.LabBindings(lab.Name, cfgPath)
		if err := os.WriteFile(cfgPath, u.ConfigText(b), 0o644); err != nil {
			return nil, "", err
		}
		argv = u.CommandLine(b)
	default:
		return nil, "", fmt.Errorf("runner: no process for a UPF of kind %q", u.Kind)
	}
	log, err := os.Create(filepath.Join(dir, "upf.log"))
	if err != nil {
		return nil, "", err
	}
	p := &process{cmd: lab.Command(lab.UPF, argv[0], argv[1:]...), log: log, done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		log.Close()
		return nil, "", fmt.Errorf("runner: start the UPF (%s): %w", strings.Join(argv, " "), err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	return p, strings.Join(argv, " "), nil
}

// pid is the UPF's process: `ip netns exec` execs the command in place.
func (p *process) pid() int { return p.cmd.Process.Pid }

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

// stop asks the UPF to end (SIGTERM: upfd sends its final reports and
// detaches), and kills it if it has not within grace.
func (p *process) stop(grace time.Duration) error {
	defer p.log.Close()
	if gone, _ := p.exited(); gone {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
		p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("runner: the UPF did not end within %v of SIGTERM: killed", grace)
	}
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
