package scenario

import (
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/sluice-upf/sluice/internal/yamlfile"
	"github.com/sluice-upf/sluice/lab/topo"
)

// Placeholders are what a command UPF's command line and config may hold,
// each in braces: {n3}. Bindings gives their values.
var Placeholders = []string{
	"n3", "n6", "n9", // the UPF's devices
	"n3_addr", "n4_addr", "n6_addr", "n9_addr", // the UPF's addresses on them
	"smf_addr", "gnb_addr", "dn_addr", // the neighbours: SMF (N4), gNB (N3), DN gateway (N6)
	"ue_pool", "netns", "config",
}

// Bindings are the values of the placeholders in one lab.
type Bindings struct {
	N3, N6, N9                     string     // device names in the UPF's namespace
	N3Addr, N4Addr, N6Addr, N9Addr netip.Addr // the UPF's addresses
	SMFAddr, GNBAddr, DNAddr       netip.Addr // the SMF's N4, the gNB's N3, the DN's N6 (next hop to the DN)
	UEPool                         netip.Prefix
	Netns                          string // the UPF's namespace
	Config                         string // the file the lab wrote upf.config to
}

// LabBindings are the bindings of the lab called lab (lab/topo's address
// plan), with the UPF's config written to configPath.
func LabBindings(lab, configPath string) Bindings {
	return Bindings{
		N3: topo.DevN3, N6: topo.DevN6, N9: topo.DevN9,
		N3Addr: topo.UPFN3, N4Addr: topo.UPFN4, N6Addr: topo.UPFN6, N9Addr: topo.UPFN9,
		SMFAddr: topo.SMFN4, GNBAddr: topo.GNBN3, DNAddr: topo.DNN6,
		UEPool: topo.UEPool,
		Netns:  topo.NamesOf(lab).UPF,
		Config: configPath,
	}
}

func (b Bindings) values() map[string]string {
	return map[string]string{
		"n3": b.N3, "n6": b.N6, "n9": b.N9,
		"n3_addr": b.N3Addr.String(), "n4_addr": b.N4Addr.String(), "n6_addr": b.N6Addr.String(), "n9_addr": b.N9Addr.String(),
		"smf_addr": b.SMFAddr.String(), "gnb_addr": b.GNBAddr.String(), "dn_addr": b.DNAddr.String(),
		"ue_pool": b.UEPool.String(), "netns": b.Netns, "config": b.Config,
	}
}

// placeholdersIn lists the placeholders of text, in order.
func placeholdersIn(text string) []string {
	var names []string
	replacePlaceholders(text, func(name string) string {
		names = append(names, name)
		return ""
	})
	return names
}

// replacePlaceholders replaces each {name} in text by with(name). Braces
// after '$' are the shell's ("${HOME}"), as are those around anything but
// a lower-case name ("{a,b}").
func replacePlaceholders(text string, with func(name string) string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(text, '{')
		if open < 0 {
			return b.String() + text
		}
		length := strings.IndexByte(text[open:], '}')
		name := ""
		if length > 0 {
			name = text[open+1 : open+length]
		}
		if !isPlaceholderName(name) || (open > 0 && text[open-1] == '$') {
			b.WriteString(text[:open+1])
			text = text[open+1:]
			continue
		}
		b.WriteString(text[:open] + with(name))
		text = text[open+length+1:]
	}
}

func isPlaceholderName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// ConfigText is upf.config as the lab writes it for a command UPF, with
// the placeholders it holds filled in. Braces around anything else stay:
// config files have their own.
func (u UPF) ConfigText(b Bindings) []byte {
	if u.Kind != UPFCommand {
		return u.Config
	}
	vals := b.values()
	return []byte(replacePlaceholders(string(u.Config), func(name string) string {
		if v, ok := vals[name]; ok {
			return v
		}
		return "{" + name + "}"
	}))
}

// CommandLine is the argv that starts a command UPF: its command line,
// placeholders filled (quoted for the shell where they need it), run by
// /bin/sh so that it may set variables and redirect output.
func (u UPF) CommandLine(b Bindings) []string {
	vals := b.values()
	line := replacePlaceholders(u.Command, func(name string) string {
		if v, ok := vals[name]; ok {
			return shellQuote(v)
		}
		return "{" + name + "}"
	})
	return []string{"/bin/sh", "-c", line}
}

// shellQuote leaves safe words as they are and single-quotes the rest.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// placeholderList writes the placeholders as {a}, {b} or {c}.
func placeholderList(names []string) string {
	braced := make([]string, len(names))
	for i, n := range names {
		braced[i] = "{" + n + "}"
	}
	return yamlfile.OrList(braced)
}

// defaultUPFName is what reports call a UPF whose file gives no name.
func defaultUPFName(u UPF) string {
	switch u.Kind {
	case UPFReference:
		return "reference forwarder"
	case UPFCommand:
		if fields := strings.Fields(u.Command); len(fields) > 0 {
			return filepath.Base(fields[0])
		}
	}
	return u.Kind
}
