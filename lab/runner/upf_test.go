package runner

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/sluice-upf/sluice/internal/config"
	"github.com/sluice-upf/sluice/lab/topo"
)

// TestUPFDGetsTheLabPools: the upfd.yaml the lab writes gives the SMF
// emulator's DNN the lab's UE pools, whatever style the scenario's
// overrides are in, and leaves the dnns a scenario sets as they are.
func TestUPFDGetsTheLabPools(t *testing.T) {
	lab := []netip.Prefix{topo.UEPool, topo.UEPoolV6}
	for _, tc := range []struct {
		name, overrides string
		dnn             string
		pools           []netip.Prefix
		sessions        int
	}{
		{"no overrides", "", "internet", lab, config.Default().MaxSessions},
		{"block overrides", "max_sessions: 100000\nxdp_mode: generic\n", "internet", lab, 100000},
		{"flow overrides", "{max_sessions: 1000000}\n", "internet", lab, 1000000},
		{"the scenario's own dnns", "dnns: [{name: ims, pools: [10.46.0.0/16]}]\n", "ims", []netip.Prefix{netip.MustParsePrefix("10.46.0.0/16")}, config.Default().MaxSessions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := withLabPools([]byte(tc.overrides))
			if err != nil {
				t.Fatal(err)
			}
			c, err := config.Parse("upf.yaml", b)
			if err != nil {
				t.Fatalf("upfd refuses\n%s: %v", b, err)
			}
			if len(c.DNNs) != 1 || c.DNNs[0].Name != tc.dnn || !slices.Equal(c.DNNs[0].Pools, tc.pools) || c.MaxSessions != tc.sessions {
				t.Errorf("dnns %v, max_sessions %d from\n%s\nwant %s with %v, %d", c.DNNs, c.MaxSessions, b, tc.dnn, tc.pools, tc.sessions)
			}
		})
	}
}
