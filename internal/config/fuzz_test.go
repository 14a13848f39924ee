package config

import (
	"strings"
	"testing"
)

// FuzzParse feeds Parse arbitrary bytes: it must return, never panic, and
// any error must be one line that starts with the file name.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		example,
		"",
		"pfcp:\n  listen: 198.18.4.2\n",
		"interfaces:\n  - {name: n3, role: n4}\n",
		"dnns:\n  - {name: a, pools: [10.0.0.0/8]}\n  - {name: A, pools: [10.1.0.0/16, 10.1.0.1/16]}\n",
		"teid_range: 0x1-0xffffffff\nmax_sessions: 16000000\n",
		"node_id: &a x\npfcp: *a\n<<: {a: 1}\n",
		"a: [1,\n",
		"--- {}\n--- []\n",
		"pfcp:\n  peers: [198.18.4.1]\n  associate: [198.18.4.1, \"[::1]:0\", smf:8805]\n  t1: 1.5s\n  n1: -1\n",
		"pfcp:\n  heartbeat_interval: 10\n  peer_grace: -1h\ngtpu: {echo_interval: 0, echo_retries: 0}\n",
		"buffer: {packets_per_session: 65535, total_packets: 1}\npin_path: /sys/fs/bpf/../bpf/a.b/\n",
		"interfaces:\n  - {name: n3, role: n3, address: 2001:db8::2, mtu: 1279}\nmax_pdrs_per_session: 33\nxdp_mode: auto\n",
		"api: {listen: \":8080\", token: \"a b\"}\nmetrics: {listen: 127.0.0.1:8080}\nlog: {level: DEBUG, format: json}\n",
		"dnns:\n  - {name: a, pools: [2001:db8::/64, 10.0.0.1/32]}\npin_path: /sys/fs/bpf/u\nstate_file: /sys/fs/bpf/u/s\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("upfd.yaml", data)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "upfd.yaml") || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("malformed error %q", msg)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted a config that Validate refuses: %v", err)
		}
	})
}

// FuzzLoad feeds Load arbitrary text as the value of each variable and
// flag: it must return, never panic, and any error must be one line that
// names the variable or flag.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{"", "3s", "[198.18.4.1, 2001:db8::1]", "a,,b", "[{name: n3, role: n3", "\"\"", "'x", "~", "*a", "{a: 1}",
		"[{name: n3, role: n3, address: 198.18.3.2, mtu: 9000}, {name: n6, role: n6}]", "--pfcp.t1"} {
		for i := range settings {
			f.Add(uint8(i), seed)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		s := settings[int(which)%len(settings)]
		for _, src := range []struct {
			args, env []string
			name      string
		}{
			{args: []string{s.flag(), text}, name: "flag " + s.flag()},
			{env: []string{s.env() + "=" + text}, name: "env " + s.env()},
		} {
			c, _, err := Load(src.args, src.env)
			if err != nil {
				msg := err.Error()
				if !strings.HasPrefix(msg, src.name+": ") || strings.ContainsAny(msg, "\r\n") {
					t.Fatalf("malformed error %q", msg)
				}
				continue
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("Load accepted a config that Validate refuses: %v", err)
			}
		}
	})
}
