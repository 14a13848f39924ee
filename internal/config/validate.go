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
// where the key at fault was set: the file and its line, the variable or
// the flag; a default is named without a line. Of several problems, the one
// earliest in the file is returned, then those of variables and flags in
// the order applied, then those of defaults.
func (c *Config) Validate() error {
	v := &validator{origin: c.origin}
	v.nodeID(c.NodeID)
	v.pfcp(c.PFCP)
	v.gtpu(c.GTPU)
	v.interfaces(c.Interfaces)
	v.dnns(c.DNNs)
	v.teidRange(c.TEIDRange)
	v.buffer(c.Buffer)
	v.alone(c)
	v.xdpMode(c.XDPMode)
	v.pinPath(c.PinPath)
	v.stateFile(c.StateFile, c.PinPath)
	v.servers(c.API, c.Metrics)
	v.log(c.Log)
	v.mtus(c.Interfaces, c.DNNs)
	return earliest(v.problems)
}

// validator gathers every problem, so that the earliest can be reported
// whatever order the checks run in.
type validator struct {
	origin   *origin
	problems []problem
}

func (v *validator) add(path, format string, args ...any) {
	v.problems = append(v.problems, v.origin.problemAt(path, fmt.Sprintf(format, args...)))
}

// where picks the first of paths that is set (by the file, a variable or
// a flag), or the first path: a key missing from an item is reported at
// the item.
func (v *validator) where(paths ...string) string {
	for _, path := range paths {
		if v.origin.has(path) {
			return path
		}
	}
	return paths[0]
}

// onLine says where path was set, " (line N)" or " (env UPFD_X)", to point
// at the other half of a conflict.
func (v *validator) onLine(path string) string {
	return v.origin.mention(path)
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
		path := yamlfile.ItemPath("pfcp.peers", i)
		switch {
		case !peer.IsValid():
			v.add(path, "not an IP address; write the SMF's N4 address, e.g. 198.18.4.1")
		case peer != peer.Masked():
			v.add(path, "%s has host bits set; write %s for the network, or %s for the SMF alone", peer, peer.Masked(), peer.Addr())
		}
	}
	v.associate(p.Associate, p.Peers)
	v.interval("pfcp.heartbeat_interval", p.HeartbeatInterval, "10s", "send no heartbeats")
	switch {
	case p.T1 < 0:
		v.add("pfcp.t1", "%s is negative; want a duration such as 3s", p.T1)
	case p.T1 == 0:
		v.add("pfcp.t1", "0s would send every request again without waiting for its response; want a duration such as 3s")
	}
	v.interval("pfcp.peer_grace", p.PeerGrace, "60s", "delete a lost SMF's sessions at once")
}

// associate checks the SMFs upfd associates with itself. Each must be
// allowed by pfcp.peers, or upfd would refuse the requests that follow.
func (v *validator) associate(list []netip.AddrPort, peers []netip.Prefix) {
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
		case len(peers) > 0 && !slices.ContainsFunc(peers, func(p netip.Prefix) bool { return p.Contains(smf.Addr()) }):
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
}

// interval checks a duration for which 0 means something, said by zero.
func (v *validator) interval(path string, d time.Duration, example, zero string) {
	if d < 0 {
		v.add(path, "%s is negative; want a duration such as %s, or 0 to %s", d, example, zero)
	}
}

// alone runs the checks that settings declare for their own values.
func (v *validator) alone(c *Config) {
	for _, s := range settings {
		if s.check != nil {
			s.check(v, s.path, c)
		}
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
	case prefix.Addr().Is4() && prefix.Bits() > 31:
		// The pool's first address stays unused (internal/session).
		v.add(path, "%s holds no UE address: a pool's first address stays unused; write a shorter prefix, e.g. %s",
			prefix, netip.PrefixFrom(prefix.Addr(), 24).Masked())
		return false
	case prefix.Addr().Is6() && prefix.Bits() > 63:
		// Each UE takes a /64, the default prefix (TS 29.244 §8.2.62), and the
		// pool's first stays unused.
		v.add(path, "%s holds no UE prefix: each UE takes a /64 of its own and a pool's first /64 stays unused; write a shorter prefix, e.g. %s",
			prefix, netip.PrefixFrom(prefix.Addr(), 48).Masked())
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

// buffer checks the total against the count per session; each count's
// range is its setting's check, which runs after this so that a total
// below a sound count per session is reported as such.
func (v *validator) buffer(b Buffer) {
	const perSession, total = "buffer.packets_per_session", "buffer.total_packets"
	if perSessionRange.Holds(b.PacketsPerSession) && b.TotalPackets < b.PacketsPerSession {
		// One session alone may fill its buffer: the total must hold it.
		v.add(v.where(total, perSession), "%d is less than %s, %d%s; raise it to at least %d or lower %s",
			b.TotalPackets, perSession, b.PacketsPerSession, v.onLine(perSession), b.PacketsPerSession, perSession)
	}
}

func (v *validator) xdpMode(mode string) {
	if mode != XDPNative && mode != XDPGeneric && mode != XDPAuto {
		v.add("xdp_mode", "%s is not a mode; want native, generic or auto", yamlfile.Quote(mode))
	}
}

// stateFile checks the file for N4's state: a plain absolute path outside
// the BPF file system, which holds only maps and programs. Without pinning
// it is not used, and may be anything.
func (v *validator) stateFile(file, pinPath string) {
	const path = "state_file"
	if pinPath == "" {
		return
	}
	rel, err := filepath.Rel(BPFFS, filepath.Clean(file))
	switch {
	case file == "":
		v.add(v.where(path, "pin_path"), "empty, but pin_path is set, and a pinned upfd saves its N4 state there; write a file such as %s", DefaultStateFile)
	case !filepath.IsAbs(file):
		v.add(path, "%s is relative; write an absolute path, e.g. %s", yamlfile.Quote(file), DefaultStateFile)
	case filepath.Clean(file) != file:
		v.add(path, "%s is not written plainly; write %s", yamlfile.Quote(file), filepath.Clean(file))
	case err == nil && rel != ".." && !strings.HasPrefix(rel, "../"):
		v.add(path, "%s is on the BPF file system, which holds no files of ours; write e.g. %s", yamlfile.Quote(file), DefaultStateFile)
	}
}

// servers checks the API's and the metrics' addresses against each other,
// and the token: it travels in an HTTP header.
func (v *validator) servers(api API, metrics Metrics) {
	const apiListen, metricsListen = "api.listen", "metrics.listen"
	if api.Listen.IsValid() && api.Listen == metrics.Listen {
		// Report the one set last by the user; the other may be a default.
		at, other := metricsListen, apiListen
		if !v.origin.has(metricsListen) {
			at, other = apiListen, metricsListen
		}
		v.add(at, "%s is also %s%s; give each server its own port, e.g. %d for the API and %d for metrics",
			api.Listen, other, v.onLine(other), DefaultAPIPort, DefaultMetricsPort)
	}
	for _, r := range api.Token {
		if r <= ' ' || r > '~' {
			// The token is a secret: say what is wrong, never what it is.
			v.add("api.token", "has a space, a control character or a character beyond ASCII, which an HTTP header cannot carry; use e.g. openssl rand -hex 32")
			return
		}
	}
}

func (v *validator) log(l Log) {
	switch l.Level {
	case LevelDebug, LevelInfo, LevelWarn, LevelError:
	default:
		v.add("log.level", "%s is not a level; want debug, info, warn or error", yamlfile.Quote(l.Level))
	}
	if l.Format != FormatText && l.Format != FormatJSON {
		v.add("log.format", "%s is not a format; want text or json", yamlfile.Quote(l.Format))
	}
}

// mtus checks each interface's MTU against what the link must carry: IPv6
// needs 1280 on a link with an IPv6 GTP-U address, and on every link
// when UEs may have IPv6 addresses.
func (v *validator) mtus(ifaces []Interface, dnns []DNN) {
	pool6, pool6Path := ipv6Pool(dnns)
	for i, iface := range ifaces {
		path := yamlfile.KeyPath(yamlfile.ItemPath("interfaces", i), "mtu")
		switch {
		case iface.MTU == 0:
		case iface.MTU < MinMTU || iface.MTU > MaxMTU:
			v.add(path, "%d is out of range; want %d to %d, or 0 to keep the device's", iface.MTU, MinMTU, MaxMTU)
		case iface.MTU >= MinMTUIPv6:
		case iface.Address.Is6():
			v.add(path, "%d is below %d, the least IPv6 allows (RFC 8200 §5), and the GTP-U address %s is IPv6; raise it to %d or more, or 0 to keep the device's",
				iface.MTU, MinMTUIPv6, iface.Address, MinMTUIPv6)
		case pool6.IsValid():
			v.add(path, "%d is below %d, the least IPv6 allows (RFC 8200 §5), and the UE pool %s%s is IPv6; raise it to %d or more, or 0 to keep the device's",
				iface.MTU, MinMTUIPv6, pool6, v.onLine(pool6Path), MinMTUIPv6)
		}
	}
}

// ipv6Pool is the first IPv6 UE pool and its path, if there is one.
func ipv6Pool(dnns []DNN) (netip.Prefix, string) {
	for i, dnn := range dnns {
		for j, pool := range dnn.Pools {
			if pool.Addr().Is6() {
				return pool, yamlfile.ItemPath(yamlfile.KeyPath(yamlfile.ItemPath("dnns", i), "pools"), j)
			}
		}
	}
	return netip.Prefix{}, ""
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
