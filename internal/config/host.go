package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/sluice-upf/sluice/internal/gtpu"
	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// bpffsMagic is the BPF file system's f_type (BPF_FS_MAGIC, linux/magic.h).
const bpffsMagic = 0xcafe4a11

// CheckHost checks c against the host it is to run on, in the caller's
// network namespace: each interface's device exists; each address upfd
// listens on (pfcp.listen over UDP, the n3 and n9 interfaces' for GTP-U,
// api.listen and metrics.listen over TCP) is one of the host's and free,
// which it learns by binding each and letting it go at once, and is not
// the n6 device's, where the datapath keeps the data network from upfd's
// sockets; forwarding is on for each device, or upfd can turn it on; and
// the BPF file system is mounted where pin_path needs it. c is
// one that Validate accepts. With pin_path set, the state file must not
// be a directory. Errors name where the key was set, as
// Validate's do; of several problems, the first in the same order.
func (c *Config) CheckHost() error {
	v := &validator{origin: c.origin}
	v.devices(c.Interfaces)
	v.forwarding(c.Interfaces)
	n6 := findN6(c.Interfaces)
	v.bind("pfcp.listen", "udp", c.PFCP.Listen, n6)
	for i, iface := range c.Interfaces {
		at := v.where(yamlfile.KeyPath(yamlfile.ItemPath("interfaces", i), "address"), yamlfile.ItemPath("interfaces", i))
		if iface.Role == RoleN3 || iface.Role == RoleN9 {
			// Echo and Error Indication leave from each path's own address.
			v.bind(at, "udp", netip.AddrPortFrom(iface.Address, gtpu.Port), n6)
		}
	}
	v.bind("api.listen", "tcp", c.API.Listen, n6)
	v.bind("metrics.listen", "tcp", c.Metrics.Listen, n6)
	if c.PinPath != "" {
		if why := bpffsProblem(BPFFS); why != "" {
			v.addHost("pin_path", why)
		}
		if why := stateFileProblem(c.StateFile); why != "" {
			v.addHost("state_file", why)
		}
	}
	return earliest(v.problems)
}

// stateFileProblem says why upfd could not write file, as far as can be
// told without writing: something else is in its place or its directory's.
func stateFileProblem(file string) string {
	if fi, err := os.Stat(file); err == nil && fi.IsDir() {
		return fmt.Sprintf("%s is a directory; name a file in it, e.g. %s", yamlfile.Quote(file), filepath.Join(file, "state.journal"))
	}
	for dir := filepath.Dir(file); dir != "/"; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			return fmt.Sprintf("%s cannot be made: %s is a file, not a directory; choose another place", yamlfile.Quote(file), dir)
		}
	}
	return ""
}

// addHost adds a problem found on the host. When a default is at fault,
// it says so: the lab's defaults are a likely surprise on another host.
func (v *validator) addHost(path, msg string) {
	if s := settingCovering(path); s != nil && !v.origin.has(path) {
		msg += fmt.Sprintf(" (%s is upfd's default; set it in the file, with %s or with %s)", s.path, s.env(), s.flag())
	}
	v.add(path, "%s", msg)
}

// forwarding checks that upfd can have the kernel forward on each device:
// the datapath's next-hop lookups (bpf_fib_lookup) answer only where
// forwarding is on, so it turns forwarding on for its devices, which
// fails where /proc/sys is read-only, as in a container. There it must be
// on already.
func (v *validator) forwarding(list []Interface) {
	for i, iface := range list {
		path := yamlfile.ItemPath("interfaces", i)
		for _, family := range []struct{ name, dir string }{{"IPv4", "ipv4"}, {"IPv6", "ipv6"}} {
			sysctl := filepath.Join(procSys, "net", family.dir, "conf", iface.Name, "forwarding")
			if why := forwardingProblem(sysctl); why != "" {
				v.addHost(v.where(yamlfile.KeyPath(path, "name"), path), fmt.Sprintf(
					"%s forwarding is off on %s, and upfd cannot turn it on (%s); turn it on before upfd starts: sysctl -w net.%s.conf.all.forwarding=1, or in a container --sysctl net.%s.conf.all.forwarding=1",
					family.name, yamlfile.Quote(iface.Name), why, family.dir, family.dir))
				break
			}
		}
	}
}

// procSys is where the kernel's sysctls are.
const procSys = "/proc/sys"

// forwardingProblem says why the forwarding sysctl at path is off and
// cannot be turned on, or "". Opening it for writing, without writing,
// changes nothing. A device that is not here is reported as such.
func forwardingProblem(path string) string {
	on, err := os.ReadFile(path)
	if err != nil || strings.TrimSpace(string(on)) != "0" {
		return ""
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err
		}
		return err.Error()
	}
	f.Close()
	return ""
}

// settingCovering is the setting of path or of the list path is in.
func settingCovering(path string) *setting {
	for i := range settings {
		o := override{path: settings[i].path}
		if o.covers(path) {
			return &settings[i]
		}
	}
	return nil
}

// devices checks that every interface's device is here.
func (v *validator) devices(list []Interface) {
	for i, iface := range list {
		if _, err := net.InterfaceByName(iface.Name); err == nil {
			continue
		}
		path := yamlfile.ItemPath("interfaces", i)
		v.addHost(v.where(yamlfile.KeyPath(path, "name"), path), fmt.Sprintf("no device %s in this network namespace (%s); create it, or name one that is here",
			yamlfile.Quote(iface.Name), devicesHere()))
	}
}

// devicesHere names the devices of this network namespace, for a hint.
func devicesHere() string {
	ifaces, err := net.Interfaces()
	if err != nil || len(ifaces) == 0 {
		return "ip link shows what there is"
	}
	const most = 8
	names := make([]string, 0, most)
	for _, iface := range ifaces[:min(len(ifaces), most)] {
		names = append(names, iface.Name)
	}
	more := ""
	if len(ifaces) > most {
		more = fmt.Sprintf(" and %d more", len(ifaces)-most)
	}
	return "it has " + strings.Join(names, ", ") + more
}

// bind checks that upfd can listen on addr (port 0: that the address is
// the host's): it binds a socket there and closes it. The invalid addr
// of a server turned off is not checked. An address of the n6 device is
// refused: the datapath lets nothing of the data network reach upfd's
// sockets, so nothing would reach this one.
func (v *validator) bind(path, network string, addr netip.AddrPort, n6 n6Device) {
	if !addr.IsValid() {
		return
	}
	if n6.holds(addr.Addr()) {
		v.addHost(path, fmt.Sprintf("%s is an address of %s, the n6 device, where the datapath lets the data network reach none of upfd's sockets; use an address of another device",
			addr.Addr(), yamlfile.Quote(n6.name)))
		return
	}
	if err := tryBind(network, addr); err != nil {
		v.addHost(path, bindProblem(network, addr, err))
	}
}

// PeerNetworks are the SMFs upfd takes requests from: pfcp.peers, or when
// that is empty, the networks of the device that holds pfcp.listen's
// address (with an unspecified address, of every device but the n6 one),
// read from the host: an SMF on N4's own link, never one from anywhere.
func (c *Config) PeerNetworks() ([]netip.Prefix, error) {
	if len(c.PFCP.Peers) > 0 {
		return c.PFCP.Peers, nil
	}
	devs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("pfcp.peers: list the host's devices: %w", err)
	}
	listen := c.PFCP.Listen.Addr().Unmap()
	n6 := findN6(c.Interfaces)
	var nets []netip.Prefix
	for _, dev := range devs {
		if dev.Name == n6.name {
			continue
		}
		addrs, err := dev.Addrs()
		if err != nil {
			return nil, fmt.Errorf("pfcp.peers: list the addresses of %s: %w", dev.Name, err)
		}
		var mine []netip.Prefix
		holds := listen.IsUnspecified()
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				mine = append(mine, p.Masked())
				holds = holds || p.Addr() == listen
			}
		}
		if holds {
			nets = append(nets, mine...)
		}
	}
	if len(nets) == 0 {
		return nil, fmt.Errorf("pfcp.peers: empty, and no device holds pfcp.listen's address %s to take the SMFs' networks from; list the SMFs in pfcp.peers", listen)
	}
	return nets, nil
}

// n6Device is the n6 interface's device and its addresses.
type n6Device struct {
	name  string
	addrs []netip.Addr
}

// findN6 finds the n6 interface's device; a device that is not here
// has no addresses (devices says so).
func findN6(list []Interface) n6Device {
	for _, iface := range list {
		if iface.Role != RoleN6 {
			continue
		}
		n6 := n6Device{name: iface.Name}
		if dev, err := net.InterfaceByName(iface.Name); err == nil {
			addrs, _ := dev.Addrs()
			for _, a := range addrs {
				if p, err := netip.ParsePrefix(a.String()); err == nil {
					n6.addrs = append(n6.addrs, p.Addr())
				}
			}
		}
		return n6
	}
	return n6Device{}
}

func (n n6Device) holds(a netip.Addr) bool { return slices.Contains(n.addrs, a.Unmap()) }

func tryBind(network string, addr netip.AddrPort) error {
	if network == "udp" {
		conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(addr))
		if err == nil {
			conn.Close()
		}
		return err
	}
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(addr))
	if err == nil {
		ln.Close()
	}
	return err
}

// bindProblem says why binding addr failed, and what to do.
func bindProblem(network string, addr netip.AddrPort, err error) string {
	shown := addr.String()
	if addr.Port() == 0 {
		shown = addr.Addr().String()
	}
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Sprintf("%s is in use by another program (%s); stop it (ss -%clpn 'sport = :%d' shows which), or choose another port",
			shown, strings.ToUpper(network), network[0], addr.Port())
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Sprintf("%s is not an address of this host (in this network namespace); add it to a device, or choose one that ip -br addr shows",
			addr.Addr())
	case errors.Is(err, syscall.EACCES):
		return fmt.Sprintf("port %d needs the capability CAP_NET_BIND_SERVICE; give it to upfd, or choose a port above 1023", addr.Port())
	}
	return fmt.Sprintf("cannot listen on %s (%s): %v", shown, strings.ToUpper(network), err)
}

// bpffsProblem says why dir is not a mounted BPF file system, or "".
func bpffsProblem(dir string) string {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return fmt.Sprintf("cannot read %s (%v); mount the BPF file system there: mount -t bpf bpf %s", dir, err, dir)
	}
	if uint32(fs.Type) != bpffsMagic {
		return fmt.Sprintf("%s is not a BPF file system, so nothing can be pinned there; mount one (mount -t bpf bpf %s), or in a container mount the host's (-v %s:%s)",
			dir, dir, dir, dir)
	}
	return ""
}
