package gnb

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strings"

	"github.com/sluice-upf/sluice/lab/topo"
)

// command runs a program and returns what it printed; an error carries the
// command line and what it said. ip itself is topo.IP.
func command(name string, args ...string) ([]byte, error) {
	out, err := exec.Command(name, args...).Output()
	if err == nil {
		return out, nil
	}
	said := ""
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		said = strings.TrimSpace(string(exit.Stderr))
	}
	if errors.Is(err, exec.ErrNotFound) {
		said = "install it (scripts/deps.sh does)"
	}
	return nil, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, said)
}

// ipBatch runs many ip commands in namespace ns at once (ip -batch): a
// thousand addresses or routes take milliseconds rather than seconds.
func ipBatch(ns string, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	cmd := exec.Command("ip", "-n", ns, "-batch", "-")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ip -n %s -batch (%d commands, the first %q): %v: %s", ns, len(lines), lines[0], err, strings.TrimSpace(string(out)))
	}
	return nil
}

// ethtool runs ethtool on dev in namespace ns.
func ethtool(ns string, args ...string) ([]byte, error) {
	return topo.IP(append([]string{"netns", "exec", ns, "ethtool"}, args...)...)
}

// setOffloads sets features of dev in ns, as `ethtool -K dev tx off ...`.
func setOffloads(ns, dev string, features ...string) error {
	_, err := ethtool(ns, append([]string{"-K", dev}, features...)...)
	return err
}

// neighbour is the MAC of addr on dev in namespace ns, as its neighbour
// table has it.
func neighbour(ns, dev string, addr netip.Addr) (net.HardwareAddr, error) {
	out, err := topo.IP("-n", ns, "-j", "neigh", "show", addr.String(), "dev", dev)
	if err != nil {
		return nil, err
	}
	var entries []struct {
		LLAddr string `json:"lladdr"`
	}
	if err := json.Unmarshal(out, &entries); err != nil {
		return nil, fmt.Errorf("ip -j neigh: %w", err)
	}
	for _, e := range entries {
		if mac, err := net.ParseMAC(e.LLAddr); err == nil {
			return mac, nil
		}
	}
	return nil, fmt.Errorf("no neighbour %v on %s in %s", addr, dev, ns)
}

// The qdisc the UEs' and the DN's stacks send through: a veth has none
// (noqueue), and then drops what its peer's ring cannot take, where a
// device with one stops its queue and the sender waits. pfifo_fast is
// built into every kernel.
const qdisc = "pfifo_fast"

// hasQdisc says whether dev in ns has a root qdisc (noqueue is none).
func hasQdisc(ns, dev string) (bool, error) {
	out, err := command("tc", "-n", ns, "-j", "qdisc", "show", "dev", dev, "root")
	if err != nil {
		return false, err
	}
	var q []struct {
		Kind string `json:"kind"`
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		if err := json.Unmarshal([]byte(s), &q); err != nil {
			return false, fmt.Errorf("tc -j qdisc show dev %s: %w", dev, err)
		}
	}
	return len(q) > 0 && q[0].Kind != "noqueue", nil
}

// setQdisc gives dev in ns the qdisc, or none (noqueue) if on is false.
func setQdisc(ns, dev string, on bool) error {
	if on {
		_, err := command("tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", qdisc)
		return err
	}
	_, err := command("tc", "-n", ns, "qdisc", "del", "dev", dev, "root")
	return err
}
