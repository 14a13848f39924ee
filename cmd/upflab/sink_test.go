package main

import (
	"slices"
	"testing"

	"github.com/sluice-upf/sluice/lab/tgen"
)

func TestSinkRefusesBadFlags(t *testing.T) {
	checkRefused(t, "sink", func(args []string) error { _, err := parseSink(args); return err }, []refused{
		{"a path is a UPF or the reference", []string{"--through", "wire"}, `"wire" for flag -through: want upf or reference`},
		{"a duration is above 0", []string{"--duration", "0s"}, "want a duration above 0 with its unit"},
		{"an interval is not negative", []string{"--interval", "-1s"}, "--interval and --idle: want 0 or more"},
		{"an idle time is not negative", []string{"--idle", "-2s"}, "--interval and --idle: want 0 or more"},
		{"a count is a number", []string{"--expect", "many"}, `invalid value "many" for flag -expect`},
		{"the sessions are the generator's", []string{"--sessions", "0"}, "--sessions 0: want 1 to"},
		{"no arguments", []string{"n6"}, `unexpected argument "n6"`},
	})
}

func TestSinkShowsTheFlowsThatNeedALook(t *testing.T) {
	flows := make([]tgen.FlowStats, 40)
	flows[3].Lost, flows[17].Duplicates, flows[39].Reordered = 1, 2, 3
	upTo := func(n int) []int {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all
	}
	for _, tc := range []struct {
		name    string
		n       int
		perFlow bool
		want    []int
	}{
		{"few flows: all", 16, false, upTo(16)},
		{"many flows: those that lost, doubled or reordered", 40, false, []int{3, 17, 39}},
		{"many flows, --per-flow: all", 40, true, upTo(40)},
	} {
		c := &counting{s: sinkRun{perFlow: tc.perFlow}}
		if got := c.flowsToShow(flows[:tc.n]); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
