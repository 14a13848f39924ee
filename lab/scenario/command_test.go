package scenario

import (
	"slices"
	"testing"
)

func TestCommandLine(t *testing.T) {
	b := LabBindings("upflab", "/tmp/upflab run/eupf.yaml")
	for _, tc := range []struct{ command, want string }{
		{"eupf --iface {n3} --iface {n6} --pfcp {n4_addr}", "eupf --iface n3 --iface n6 --pfcp 198.18.4.2"},
		{"upf {n3}{n6} {n3_addr}/{ue_pool}", "upf n3n6 198.18.3.2/10.32.0.0/12"},
		{"upf -c {config}", "upf -c '/tmp/upflab run/eupf.yaml'"},
		{"upf --smf {smf_addr} --gnb {gnb_addr} --dn {dn_addr} --ns {netns}", "upf --smf 198.18.4.1 --gnb 198.18.3.1 --dn 198.18.6.1 --ns upflab-upf"},
		{"HOME=${HOME}/x upf {n3} {a,b} {N3} {", "HOME=${HOME}/x upf n3 {a,b} {N3} {"},
	} {
		got := UPF{Kind: UPFCommand, Command: tc.command}.CommandLine(b)
		if want := []string{"/bin/sh", "-c", tc.want}; !slices.Equal(got, want) {
			t.Errorf("%q: got %q; want %q", tc.command, got, want)
		}
	}
}

func TestConfigText(t *testing.T) {
	u := UPF{Kind: UPFCommand, Config: []byte("iface: [{n3}, {n6}]\nnode: {n4_addr}\nmap: {a: 1}\njson: {\"x\": {unknown}}\n")}
	got := string(u.ConfigText(LabBindings("lab2", "/c")))
	want := "iface: [n3, n6]\nnode: 198.18.4.2\nmap: {a: 1}\njson: {\"x\": {unknown}}\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	upfd := UPF{Kind: UPFBuiltIn, Config: []byte("max_sessions: 5\n")}
	if string(upfd.ConfigText(Bindings{})) != "max_sessions: 5\n" {
		t.Error("upfd's config was changed")
	}
}

func TestPlaceholdersIn(t *testing.T) {
	got := placeholdersIn("{n3}{n6} ${n9} {config} {A} {a,b} {}")
	if want := []string{"n3", "n6", "config"}; !slices.Equal(got, want) {
		t.Errorf("got %q; want %q", got, want)
	}
	if LabBindings("x", "").values()["netns"] != "x-upf" || len(LabBindings("x", "").values()) != len(Placeholders) {
		t.Error("every placeholder needs a value")
	}
}

func TestDefaultUPFName(t *testing.T) {
	for _, tc := range []struct {
		text, want string
	}{
		{"upf: upfd", "upfd"},
		{"upf: reference", "reference forwarder"},
		{"upf: {kind: command, command: \"/opt/open5gs/bin/open5gs-upfd -c {config}\", config: x}", "open5gs-upfd"},
		{"upf: {kind: command, command: x, name: Open5GS UPF}", "Open5GS UPF"},
		{"upf: {command: /usr/bin/eupf}", "eupf"}, // kind: command goes without saying
	} {
		s := mustParse(t, tc.text+"\nsteps: [{kind: churn}]\n")
		if s.UPF.Name != tc.want {
			t.Errorf("%s: name %q; want %q", tc.text, s.UPF.Name, tc.want)
		}
	}
}
