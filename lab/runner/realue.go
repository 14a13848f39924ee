package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"time"

	"github.com/sluice-upf/sluice/lab/gnb"
	"github.com/sluice-upf/sluice/lab/topo"
)

// The steps with real UEs (iperf, web, ping from a UE) share these: the
// gNB for the run's first sessions, and servers in the DN.

// attachGNB builds the gNB's user plane for the run's first n sessions and
// attaches it. The caller closes it: the gNB's n3 takes one XDP program,
// and the other steps' sink needs it back.
func (r *runner) attachGNB(n int) (*gnb.GNB, error) {
	sessions := r.smf.Sessions()
	if n > len(sessions) {
		return nil, fmt.Errorf("%d UEs, %d sessions", n, len(sessions))
	}
	g, err := gnb.New(gnb.Options{Lab: r.lab, Sessions: sessions[:n]})
	if err != nil {
		return nil, err
	}
	if err := g.Attach(); err != nil {
		return nil, errors.Join(err, g.Close())
	}
	return g, nil
}

// usePath switches the UEs to the tunnel or to the direct link.
func usePath(g *gnb.GNB, direct bool) error {
	if direct {
		return g.Use(gnb.Direct)
	}
	return g.Use(gnb.Tunnel)
}

// dnProcess is a server the lab started in the DN; stop ends it by its PID.
type dnProcess struct{ cmd *exec.Cmd }

// startInDN starts a program in the DN's namespace and waits until it
// listens on TCP at addr.
func startInDN(lab topo.Lab, addr netip.AddrPort, name string, args ...string) (*dnProcess, error) {
	cmd := lab.Command(lab.DN, name, args...)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s in the DN: %w", name, err)
	}
	p := &dnProcess{cmd: cmd}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var c net.Conn
		err := lab.Do(lab.DN, func() (err error) {
			c, err = net.DialTimeout("tcp", addr.String(), time.Second)
			return err
		})
		if err == nil {
			c.Close()
			return p, nil
		}
	}
	p.stop()
	return nil, fmt.Errorf("%s in the DN did not listen on %v within 5s", name, addr)
}

// stop kills the server (ip netns exec execs it: the PID is its own) and
// reaps it.
func (p *dnProcess) stop() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// iperfServers runs an iperf3 server in the DN for each of n UEs, on the
// DN host's address, ports from iperfPort.
func iperfServers(lab topo.Lab, n int) (stop func(), err error) {
	var servers []*dnProcess
	stop = func() {
		for _, s := range servers {
			s.stop()
		}
	}
	for i := range n {
		port := iperfPort + i
		s, err := startInDN(lab, netip.AddrPortFrom(topo.DNHost, uint16(port)),
			"iperf3", "-s", "-B", topo.DNHost.String(), "-p", strconv.Itoa(port))
		if err != nil {
			stop()
			return nil, err
		}
		servers = append(servers, s)
	}
	return stop, nil
}

// iperfPort is the first UE's iperf3 server's port, iperf3's own.
const iperfPort = 5201

// withTimeout bounds a measurement of d: its own time and the setting up
// and winding down of its tools.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d+20*time.Second)
}
