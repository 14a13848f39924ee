package scenario

import (
	"reflect"
	"testing"
	"time"
)

// TestIperfScenario pins down what iperf3.yaml measures: iperf3 from 1
// and 8 UEs beside the ceiling, TCP under three MBRs, ping from a UE.
func TestIperfScenario(t *testing.T) {
	s := mustParse(t, shipped(t, "iperf3.yaml"))
	want := []Step{
		{Kind: KindIperf, Name: "iperf3", Settings: &Iperf{UEs: []int{1, 8}, Streams: 1, Protocols: []string{"tcp", "udp"},
			Direction: Both, Duration: 5 * time.Second, UDPRate: Rate{BPS: 1e9}, Ceiling: true}},
		{Kind: KindIperf, Name: "policing", Settings: &Iperf{UEs: []int{1}, Streams: 1, Protocols: []string{"tcp"},
			Direction: Both, Duration: 5 * time.Second, UDPRate: Rate{BPS: 1e9},
			MBR: []Rate{{BPS: 10e6}, {BPS: 100e6}, {BPS: 1e9}}}},
		{Kind: KindPing, Name: "ping from a UE", Settings: &Ping{Sizes: []int{64, 1372}, Count: 100,
			Interval: 10 * time.Millisecond, Mode: PingUE}},
	}
	if !reflect.DeepEqual(s.Steps, want) {
		for i := range s.Steps {
			t.Errorf("steps[%d]: %s %+v", i, s.Steps[i].Name, s.Steps[i].Settings)
		}
	}
	if s.UPF.Kind != UPFBuiltIn || s.MeasuresReference() || s.Sessions.Count != 1000 {
		t.Errorf("upf %s, reference %v, %d sessions; want upfd without the reference forwarder, 1000",
			s.UPF.Kind, s.MeasuresReference(), s.Sessions.Count)
	}
	// 2 counts × 2 protocols × 2 directions, twice with the ceiling; 3
	// MBRs × 2 directions; 200 pings 10 ms apart.
	if got, want := s.Estimate(), (80+30+2)*time.Second; got != want {
		t.Errorf("Estimate() = %s; want %s", got, want)
	}
}

// TestWebScenario: web.yaml is the cloud study's four counts with seed
// 003's flows, beside the ceiling.
func TestWebScenario(t *testing.T) {
	s := mustParse(t, shipped(t, "web.yaml"))
	want := &Web{Counts: []int{100, 500, 1000, 2000}, Duration: 10 * time.Second,
		Uplink: SeedUplink, Downlink: SeedDownlink, Ceiling: true}
	if len(s.Steps) != 1 || !reflect.DeepEqual(s.Steps[0].Settings, want) {
		t.Errorf("steps %+v; want one web step %+v", s.Steps, want)
	}
	if got := s.Estimate(); got != 80*time.Second {
		t.Errorf("Estimate() = %s; want 80s", got)
	}
	http, udp := Rates(SeedDownlink)
	if http != 2_331_600 || len(udp) != 1 || udp[0].PacketBytes() != 539 {
		t.Errorf("downlink: HTTP %v bit/s, UDP %+v; want 2331600 and one flow of 539-byte packets", http, udp)
	}
}

// TestRealUEDefaults: a step that sets only its kind takes the defaults
// the docs give, and the sessions its UEs need.
func TestRealUEDefaults(t *testing.T) {
	s := mustParse(t, "steps: [{kind: iperf, ues: [1, 200]}, {kind: web}, {kind: ping, mode: ue}]")
	if s.Sessions.Count != 2000 {
		t.Errorf("sessions.count %d; want 2000, the web step's largest count", s.Sessions.Count)
	}
	if got := s.Steps[0].Settings.(*Iperf); got.Streams != 1 || len(got.Protocols) != 2 || got.Direction != Both ||
		got.Duration != 5*time.Second || got.UDPRate.BPS != 1e9 || !got.Ceiling || got.MBR != nil {
		t.Errorf("iperf defaults %+v", got)
	}
	if s.Steps[2].Name != "ping from a UE 64-1400 B" {
		t.Errorf("ping's derived name %q", s.Steps[2].Name)
	}
}

func TestRealUEErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"more UEs than sessions", "sessions: {count: 4}\nsteps:\n  - kind: iperf\n    ues: [1, 8]\n",
			`scenario.yaml:4: steps[0].ues[1]: 8 UEs are more than the 4 sessions (line 1); each has a session, so raise sessions.count`},
		{"more subscribers than sessions", "sessions: {count: 150}\nsteps:\n  - {kind: web, counts: [100, 200]}\n",
			`scenario.yaml:3: steps[0].counts[1]: 200 subscribers are more than the 150 sessions (line 1); each has a session, so raise sessions.count`},
		{"the reference forwarder", "upf: reference\nsteps:\n  - kind: iperf\n",
			`scenario.yaml:3: steps[0].kind: real UEs need a UPF with their sessions, which the reference forwarder is not; measure upfd or a command UPF, so change upf (line 1)`},
		{"ping from a UE through the reference", "upf: {kind: reference}\nsteps:\n  - kind: ping\n    mode: ue\n",
			`scenario.yaml:4: steps[0].mode: real UEs need a UPF with their sessions, which the reference forwarder is not; measure upfd or a command UPF, so change upf.kind (line 1)`},
		{"ping mode", "steps:\n  - {kind: ping, mode: kernel}\n",
			`scenario.yaml:2: steps[0].mode: "kernel" is not a ping mode; want probe or ue`},
		{"protocol twice", "steps:\n  - {kind: iperf, protocols: [tcp, udp, tcp]}\n",
			`scenario.yaml:2: steps[0].protocols[2]: tcp is listed already as steps[0].protocols[0]; list each once`},
		{"protocol", "steps:\n  - {kind: iperf, protocols: quic}\n",
			`scenario.yaml:2: steps[0].protocols[0]: "quic" is not a protocol; want tcp or udp`},
		{"MBR in packets", "steps:\n  - {kind: iperf, mbr: [10Mbps, 1kpps]}\n",
			`scenario.yaml:2: steps[0].mbr[1]: "1kpps" is a packet rate; write the bit rate here (e.g. 567.2kbps) and the packets in pps:`},
		{"MBR below a kbit/s", "steps:\n  - {kind: iperf, mbr: 500bps}\n",
			`scenario.yaml:2: steps[0].mbr[0]: "500bps" is below 1kbps, the least an MBR carries; want e.g. 10Mbps`},
		{"too many UEs", "steps:\n  - {kind: iperf, ues: 300}\n",
			`scenario.yaml:2: steps[0].ues[0]: "300" is out of range; want 1 to 256`},
		{"a subscribers key", "steps:\n  - {kind: iperf, per_second: 3}\n",
			`scenario.yaml:2: steps[0].per_second: a key of churn steps, not here; an iperf step takes kind, name, ues, streams, protocols, direction, duration, udp_rate, mbr or ceiling`},
		{"a web flow too short", "steps:\n  - kind: web\n    uplink: [{protocol: udp, rate: 8kbps, pps: 100}]\n",
			`scenario.yaml:3: steps[0].uplink[0]: 8kbps at 100 pps makes 10-byte packets; want 52 to 1456 bytes: change rate or pps`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("scenario.yaml", []byte(tc.text))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got\n%v\nwant\n%s", err, tc.want)
			}
		})
	}
}
