package runner

import (
	"slices"
	"testing"
)

func TestWorkersSpinAsFewCoresAsTheRateNeeds(t *testing.T) {
	cpus := []int{0, 1, 2, 3}
	for _, tc := range []struct {
		name  string
		pps   float64
		flows int
		want  []int
	}{
		{"flat out: every core", 0, 100, cpus},
		{"a rate one worker keeps up: one core", 100_000, 100, cpus[:1]},
		{"3 Mpps: still one", 3e6, 100, cpus[:1]},
		{"above: as many as it takes", 7e6, 100, cpus[:3]},
		{"more than the cores: every core", 1e9, 100, cpus},
		{"no more workers than flows", 0, 2, cpus[:2]},
	} {
		if got := Workers(cpus, tc.pps, tc.flows); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
