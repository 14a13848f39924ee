package runner

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/report"
)

// TestPrivilegedRealUEsThroughUPFD runs each kind with real UEs against
// upfd for a second or two: iperf3 both ways beside the ceiling, TCP
// under an MBR, the web model, the system's ping from a UE, and the
// probe's ping after the gNB has gone. Figures must be there, not fast.
func TestPrivilegedRealUEsThroughUPFD(t *testing.T) {
	testenv.RequirePrivileges(t)
	for _, tool := range []string{"iperf3", "ping"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s: %v (scripts/deps.sh installs it)", tool, err)
		}
	}
	lab := fmt.Sprintf("sluiceru%d", os.Getpid()%100000)
	run := runUPFD(t, "realue.yaml", lab, `
topology: {name: %s}
reference: false
sessions: {count: 20}
steps:
  - {kind: iperf, ues: 2, duration: 1s, udp_rate: 50Mbps}
  - {kind: iperf, name: policed, ues: 1, protocols: tcp, direction: uplink, mbr: 50Mbps, duration: 2s, ceiling: false}
  - {kind: web, counts: 10, duration: 2s}
  - {kind: ping, mode: ue, sizes: [64, 1372], count: 5, interval: 10ms}
  - {kind: ping, sizes: 64, count: 5, interval: 10ms}
outputs: {directory: %s, formats: [json]}
`, 3*time.Minute)
	for _, st := range run.Steps {
		if st.Error != "" {
			t.Errorf("step %s failed: %s", st.Name, st.Error)
		}
	}
	iperf := run.Steps[0].Iperf
	if len(iperf) != 4 {
		t.Fatalf("%d iperf3 measurements; want TCP and UDP each way", len(iperf))
	}
	for _, x := range iperf {
		if x.Mbps <= 0 || len(x.PerUEMbps) != 2 || x.Ceiling == nil || x.Ceiling.Mbps <= 0 || x.RatioToCeiling == nil {
			t.Errorf("%s %s: %.1f Mbit/s %v, ceiling %+v; want goodput from both UEs and a ceiling", x.Protocol, x.Direction, x.Mbps, x.PerUEMbps, x.Ceiling)
		}
	}
	// Not a speed: a policer that let twice its MBR through polices nothing.
	if p := run.Steps[1].Iperf; len(p) != 1 || p[0].OfMBR == nil || *p[0].OfMBR <= 0 || *p[0].OfMBR > 2 {
		t.Errorf("under an MBR: %+v; want TCP's goodput, below twice the MBR", p)
	}
	web := run.Steps[2].Web
	if len(web) != 1 || web[0].Ceiling == nil {
		t.Fatalf("web: %+v; want one count with its ceiling", web)
	}
	for name, l := range map[string]report.WebLoad{"through upfd": web[0], "ceiling": *web[0].Ceiling} {
		if l.Fetches == 0 || l.FailedFetches != 0 || l.Uplink.UDPReceived == 0 || l.Downlink.UDPReceived == 0 {
			t.Errorf("web %s: %d fetches, %d failed, UDP received %d up, %d down; want fetches, none failed, UDP both ways",
				name, l.Fetches, l.FailedFetches, l.Uplink.UDPReceived, l.Downlink.UDPReceived)
		}
	}
	for _, i := range []int{3, 4} {
		for _, p := range run.Steps[i].Ping {
			if p.Transmitted != 5 || p.Received != 5 || p.MinMs <= 0 {
				t.Errorf("%s, %d B: %d of %d answered, min %.3f ms; want 5 of 5", run.Steps[i].Name, p.Size, p.Received, p.Transmitted, p.MinMs)
			}
		}
	}
	if _, err := os.Stat("/run/netns/" + lab + "-ue"); err == nil {
		t.Errorf("the UE namespace is left after the run")
	}
}
