package smf

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// TestPrivilegedRulesAndUsage: upfd takes every kind of rule a check
// asks for; a periodic URR reports while the session lives, and each
// URR's final report comes with its deletion.
func TestPrivilegedRulesAndUsage(t *testing.T) {
	testenv.RequirePrivileges(t)
	lab := testenv.NewLab(t)
	log := startUPFD(t, lab)
	c := dialUPFD(t, lab, log, Config{})
	ctx := context.Background()
	reports := make(chan Report, 16)
	c.OnReport(func(r Report) {
		select {
		case reports <- r:
		default:
		}
	})
	defer c.OnReport(nil)
	var all []Session
	for name, r := range map[string]Rules{
		"MBR":         {MBR: &Bitrate{UplinkKbps: 64, DownlinkKbps: 1_000_000}},
		"gate closed": {GateClosed: true},
		"buffering":   {Buffer: true},
		"quotas":      {URR: &URR{VolQuota: 1 << 20, TimeQuota: 30 * time.Second}},
		"periodic":    {URR: &URR{Period: time.Second, VolThreshold: 1 << 20}},
	} {
		got, phase, err := c.EstablishWith(ctx, 1, r)
		if err != nil || len(got) != 1 || got[0].UplinkTEID == 0 {
			t.Fatalf("%s: %v, %v: %v\n%s", name, got, phase, err, log())
		}
		all = append(all, got...)
	}
	select {
	case r := <-reports:
		if len(r.Usage) != 1 || r.Usage[0].Trigger&TrigPeriodic == 0 {
			t.Errorf("report %+v; want one periodic usage report", r)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("no periodic report within 3 s of a 1 s period\n%s", log())
	}
	phase, final, err := c.DeleteSessions(ctx, all)
	if err != nil || phase.Accepted != len(all) {
		t.Fatalf("delete: %v: %v", phase, err)
	}
	if len(final) != len(all) {
		t.Fatalf("%d final usage reports of %d sessions: %+v", len(final), len(all), final)
	}
	for _, u := range final {
		if u.Trigger&TrigTermination == 0 || u.URRID != plainURR || u.Uplink.Packets != 0 {
			t.Errorf("final report %+v; want TERMR for URR %d, no traffic", u, plainURR)
		}
	}
	if n := len(c.Sessions()); n != 0 {
		t.Errorf("%d sessions left after deleting them all", n)
	}
}
