package config

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// Validate checks the rules that a value's type alone cannot express, and
// how values relate to each other. If c came from Parse or Load, errors name
// the file and the line of the key at fault; a key the file left out (a
// default) is named without a line. Of several problems, the one earliest in
// the file is returned.
func (c *Config) Validate() error {
	v := &validator{src: c.src}
	v.nodeID(c.NodeID)
	v.pfcp(c.PFCP)
	v.gtpu(c.GTPU)
	v.interfaces(c.Interfaces)
	v.dnns(c.DNNs)
	v.teidRange(c.TEIDRange)
	v.count("max_sessions", c.MaxSessions, sessionsRange)
	v.buffer(c.Buffer)
	v.xdpMode(c.XDPMode)
	v.pinPath(c.PinPath)
	return yamlfile.Earliest(v.problems)
}

// validator gathers every problem, so that the earliest in the file can be
// reported whatever order the checks run in.
type validator struct {
	src      *source
	problems []*yamlfile.Error
}

func (v *validator) add(path, format string, args ...any) {
	v.problems = append(v.problems, &yamlfile.Error{File: v.src.Name(), Line: v.src.Line(path), Key: path, Msg: fmt.Sprintf(format, args...)})
}

// where picks the first of paths that the file sets, or the first path:
// a key missing from an item is reported at the item.
func (v *validator) where(paths ...string) string {
	for _, path := range paths {
		if v.src.Has(path) {
			return path
		}
	}
	return paths[0]
}

// onLine says " (line N)" for a path the file sets, to point at the other
// half of a conflict.
func (v *validator) onLine(path string) string {
	if line := v.src.Line(path); line > 0 {
		return fmt.Sprintf(" (line %d)", line)
	}
	return ""
}

func (v *validator) nodeID(id string) {
	const path = "node_id"
	if id == "" {
		v.add(path, "empty; set it to the UPF's N4 address, e.g. 198.18.4.2, or to its FQDN")
		return
	}
	addr, err := netip.ParseAddr(id)
	switch {
	case err != nil:
		if why := fqdnProblem(id); why != "" {
			v.add(path, "%s is neither an IP address nor a valid FQDN: %s", yamlfile.Quote(id), why)
		}
	case addr.Zone() != "":
		v.add(path, "%s has a zone, which a node ID cannot carry; write %s", yamlfile.Quote(id), addr.WithZone(""))
	case addr.IsUnspecified():
		v.add(path, "%s is unspecified; write the UPF's N4 address, e.g. 198.18.4.2", addr)
	}
}

func (v *validator) pfcp(p PFCP) {
	const listen = "pfcp.listen"
	switch {
	case !p.Listen.IsValid():
		v.add(listen, "not set; write an address and port such as 198.18.4.2:%d", DefaultPFCPPort)
	case p.Listen.Port() == 0:
		v.add(listen, "%s has port 0; use %d, the PFCP port", p.Listen, DefaultPFCPPort)
	}
	for i, peer := range p.Peers {
		if !peer.IsValid() {
			v.add(yamlfile.ItemPath("pfcp.peers", i), "not an IP address; write the SMF's N4 address, e.g. 198.18.4.1")
		}
	}
	v.associate(p.Associate, p.Peers)
	v.interval("pfcp.heartbeat_interval", p.HeartbeatInterval, "10s", "send no heartbeats")
	v.count("pfcp.heartbeat_retries", p.HeartbeatRetries, sendsRange)
	switch {
	case p.T1 < 0:
		v.add("pfcp.t1", "%s is negative; want a duration such as 3s", p.T1)
	case p.T1 == 0:
		v.add("pfcp.t1", "0s would send every request again without waiting for its response; want a duration such as 3s")
	}
	v.count("pfcp.n1", p.N1, sendsRange)
	v.interval("pfcp.peer_grace", p.PeerGrace, "60s", "delete a lost SMF's sessions at once")
}

// associate checks the SMFs upfd associates with itself. Each must be
// allowed by pfcp.peers, or upfd would refuse the requests that follow.
func (v *validator) associate(list []netip.AddrPort, peers []netip.Addr) {
	allowed := make([]netip.Addr, len(peers))
	for i, peer := range peers {
		allowed[i] = peer.Unmap()
	}
	seen := map[netip.AddrPort]string{} // SMF to the path that first listed it
	for i, to := range list {
		path := yamlfile.ItemPath("pfcp.associate", i)
		smf := netip.AddrPortFrom(to.Addr().Unmap(), to.Port())
		first, listed := seen[smf]
		switch {
		case !to.IsValid():
			v.add(path, "not an IP address; write the SMF's N4 address, e.g. 198.18.4.1 or 198.18.4.1:%d", DefaultPFCPPort)
		case to.Addr().IsUnspecified():
			v.add(path, "%s is unspecified; write the SMF's N4 address, e.g. 198.18.4.1", to.Addr())
		case to.Port() == 0:
			v.add(path, "%s has port 0; use %d, the PFCP port", to, DefaultPFCPPort)
		case listed:
			v.add(path, "%s is already listed as %s%s; list each SMF once", to, first, v.onLine(first))
		case len(allowed) > 0 && !slices.Contains(allowed, smf.Addr()):
			v.add(path, "%s is not in pfcp.peers%s, so upfd would refuse its requests; add %s there",
				to.Addr(), v.onLine("pfcp.peers"), to.Addr())
		}
		if !listed {
			seen[smf] = path
		}
	}
}

func (v *validator) gtpu(g GTPU) {
	v.interval("gtpu.echo_interval", g.EchoInterval, "60s", "send no Echo Requests")
	v.count("gtpu.echo_retries", g.EchoRetries, sendsRange)
}

// interval checks a duration for which 0 means something, said by zero.
func (v *validator) interval(path string, d time.Duration, example, zero string) {
	if d < 0 {
		v.add(path, "%s is negative; want a duration such as %s, or 0 to %s", d, example, zero)
	}
}

// count checks a whole number against its range.
func (v *validator) count(path string, n int, r countRange) {
	if !r.holds(n) {
		v.add(path, "%d is out of range; want %s", n, r)
	}
}

func (v *validator) interfaces(list []Interface) {
	byName := map[string]string{} // device name to the path of its interface
	byRole := map[string]string{} // role to the path of its first interface
	rolesKnown := true
	for i, iface := range list {
		path := yamlfile.ItemPath("interfaces", i)
		v.interfaceName(path, iface.Name, byName)
		if v.interfaceRole(path, iface.Role, byRole) {
			v.interfaceAddress(path, iface)
		} else {
			rolesKnown = false
		}
	}
	// A mistyped role is likely the missing one: report only the typo.
	if !rolesKnown {
		return
	}
	if byRole[RoleN3] == "" {
		v.add("interfaces", "no n3 interface; add one with role: n3 and its GTP-U address")
	}
	if byRole[RoleN6] == "" {
		v.add("interfaces", "no n6 interface; add one with role: n6")
	}
}

func (v *validator) interfaceName(path, name string, byName map[string]string) {
	at := v.where(yamlfile.KeyPath(path, "name"), path)
	if name == "" {
		v.add(at, "no device name; add name: with the device, e.g. name: eth1")
		return
	}
	if why := ifnameProblem(name); why != "" {
		v.add(at, "%s %s", yamlfile.Quote(name), why)
		return
	}
	if other, taken := byName[name]; taken {
		v.add(at, "%s is already used by %s%s; give each interface its own device", yamlfile.Quote(name), other, v.onLine(other))
		return
	}
	byName[name] = path
}

// interfaceRole checks one role and counts it; it reports whether the role
// is known, for the checks that depend on it.
func (v *validator) interfaceRole(path, role string, byRole map[string]string) bool {
	at := v.where(yamlfile.KeyPath(path, "role"), path)
	switch role {
	case RoleN3, RoleN6, RoleN9:
	case "":
		v.add(at, "no role; add role: n3, n6 or n9")
		return false
	default:
		v.add(at, "%s is not a role; want n3, n6 or n9", yamlfile.Quote(role))
		return false
	}
	other, taken := byRole[role]
	switch {
	case !taken:
		byRole[role] = path
	case role == RoleN9:
		v.add(at, "a second n9 interface, after %s%s; upfd takes at most one, remove one", other, v.onLine(other))
	default:
		v.add(at, "a second %s interface, after %s%s; upfd takes exactly one, remove one", role, other, v.onLine(other))
	}
	return true
}

func (v *validator) interfaceAddress(path string, iface Interface) {
	at := v.where(yamlfile.KeyPath(path, "address"), path)
	hasAddress := iface.Address.IsValid()
	switch {
	case iface.Role == RoleN6 && hasAddress:
		v.add(at, "n6 interface %s takes no address (N6 carries plain IP, not GTP-U); remove address:", yamlfile.Quote(iface.Name))
	case iface.Role != RoleN6 && !hasAddress:
		v.add(at, "%s interface %s has no address; add address: with its GTP-U IP, e.g. 198.18.3.2", iface.Role, yamlfile.Quote(iface.Name))
	case hasAddress && iface.Address.IsUnspecified():
		v.add(at, "%s is unspecified; write the address GTP-U peers send to, e.g. 198.18.3.2", iface.Address)
	}
}

// placedPool is a pool already checked, kept to find overlaps.
type placedPool struct {
	prefix netip.Prefix
	dnn    string
	path   string
}

func (v *validator) dnns(list []DNN) {
	if len(list) == 0 {
		v.add("dnns", "no dnn; add one, e.g. {name: internet, pools: [10.45.0.0/16]}")
		return
	}
	byName := map[string]firstUse{} // lower-case name to the dnn that took it
	var placed []placedPool
	for i, dnn := range list {
		path := yamlfile.ItemPath("dnns", i)
		v.dnnName(path, dnn.Name, byName)
		placed = v.dnnPools(path, dnn, placed)
	}
}

// firstUse is where a name was first given.
type firstUse struct{ name, path string }

func (v *validator) dnnName(path, name string, byName map[string]firstUse) {
	at := v.where(yamlfile.KeyPath(path, "name"), path)
	if name == "" {
		v.add(at, "no name; add name: with the dnn, e.g. name: internet")
		return
	}
	// DNNs are DNS-style names (TS 23.003), so case does not tell them apart.
	folded := strings.ToLower(name)
	first, taken := byName[folded]
	switch {
	case !taken:
		byName[folded] = firstUse{name: name, path: path}
	case first.name != name:
		v.add(at, "%s repeats %s of %s%s, as dnn names ignore case; give each dnn its own name",
			yamlfile.Quote(name), yamlfile.Quote(first.name), first.path, v.onLine(first.path))
	default:
		v.add(at, "%s is already used by %s%s; give each dnn its own name", yamlfile.Quote(name), first.path, v.onLine(first.path))
	}
}

// dnnPools checks the pools of one DNN against each other and against
// those placed before, and returns placed with them added.
func (v *validator) dnnPools(path string, dnn DNN, placed []placedPool) []placedPool {
	poolsPath := yamlfile.KeyPath(path, "pools")
	if len(dnn.Pools) == 0 {
		v.add(v.where(poolsPath, path), "dnn %s has no pools; add pools: with its UE prefixes, e.g. [10.45.0.0/16]", yamlfile.Quote(dnn.Name))
		return placed
	}
	for j, prefix := range dnn.Pools {
		at := yamlfile.ItemPath(poolsPath, j)
		if !v.pool(at, prefix) {
			continue
		}
		if other, found := overlapping(placed, prefix); found {
			v.add(at, "%s of dnn %s overlaps %s of dnn %s%s; make the pools disjoint",
				prefix, yamlfile.Quote(dnn.Name), other.prefix, yamlfile.Quote(other.dnn), v.onLine(other.path))
		}
		placed = append(placed, placedPool{prefix: prefix, dnn: dnn.Name, path: at})
	}
	return placed
}

// pool checks one prefix on its own and reports whether it is sound.
func (v *validator) pool(path string, prefix netip.Prefix) bool {
	switch {
	case !prefix.IsValid():
		v.add(path, "not an IP prefix; write it as address/length, e.g. 10.45.0.0/16")
		return false
	case prefix != prefix.Masked():
		v.add(path, "%s has host bits set; write %s", prefix, prefix.Masked())
		return false
	}
	return true
}

// overlapping finds the first placed pool that shares addresses with prefix.
func overlapping(placed []placedPool, prefix netip.Prefix) (placedPool, bool) {
	for _, other := range placed {
		if other.prefix.Overlaps(prefix) {
			return other, true
		}
	}
	return placedPool{}, false
}

func (v *validator) teidRange(r TEIDRange) {
	const path = "teid_range"
	switch {
	case r.First == 0:
		v.add(path, "%#x-%#x starts at TEID 0, which is reserved; start at 0x1 or above", r.First, r.Last)
	case r.First > r.Last:
		v.add(path, "%#x-%#x runs backwards; write the lower TEID first, %#x-%#x", r.First, r.Last, r.Last, r.First)
	}
}

func (v *validator) buffer(b Buffer) {
	const perSession, total = "buffer.packets_per_session", "buffer.total_packets"
	v.count(perSession, b.PacketsPerSession, perSessionRange)
	switch {
	case !perSessionRange.holds(b.PacketsPerSession):
		v.count(total, b.TotalPackets, totalRange)
	case b.TotalPackets < b.PacketsPerSession:
		// One session alone may fill its buffer: the total must hold it.
		v.add(v.where(total, perSession), "%d is less than %s, %d%s; raise it to at least %d or lower %s",
			b.TotalPackets, perSession, b.PacketsPerSession, v.onLine(perSession), b.PacketsPerSession, perSession)
	}
}

func (v *validator) xdpMode(mode string) {
	if mode != XDPNative && mode != XDPGeneric {
		v.add("xdp_mode", "%s is not a mode; want native or generic", yamlfile.Quote(mode))
	}
}

// pinPath checks the directory for pins: below the BPF file system's mount,
// written plainly, and with names that file system accepts.
func (v *validator) pinPath(dir string) {
	const path = "pin_path"
	if dir == "" {
		return
	}
	clean := filepath.Clean(dir)
	rel, err := filepath.Rel(BPFFS, clean)
	switch {
	case !filepath.IsAbs(dir):
		v.add(path, "%s is relative; write a directory under %s, e.g. %s/upfd", yamlfile.Quote(dir), BPFFS, BPFFS)
	case err != nil || rel == ".." || strings.HasPrefix(rel, "../"):
		v.add(path, "%s is outside %s, and only the BPF file system mounted there holds pins; write e.g. %s/upfd",
			yamlfile.Quote(dir), BPFFS, BPFFS)
	case rel == ".":
		v.add(path, "%s is the root of the BPF file system; give upfd a directory of its own, e.g. %s/upfd", yamlfile.Quote(dir), BPFFS)
	case clean != dir:
		v.add(path, "%s is not written plainly; write %s", yamlfile.Quote(dir), clean)
	case strings.Contains(rel, "."):
		// The kernel reserves dots in bpffs names (bpf_lookup: EPERM).
		v.add(path, "%s has a '.' in a name below %s, which the BPF file system refuses; remove it", yamlfile.Quote(dir), BPFFS)
	}
}
