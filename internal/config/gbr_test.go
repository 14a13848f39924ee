package config

import (
	"reflect"
	"testing"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// TestParseGBRCapacity pins down how bit rates are read: units and their
// bps forms in any case, fractions kept exact, 0 alone.
func TestParseGBRCapacity(t *testing.T) {
	for _, tc := range []struct {
		name, text     string
		uplink, downlk uint64
	}{
		{"absent: no limit", "", 0, 0},
		{"a section left empty", "gbr_capacity:\n", 0, 0},
		{"Gbit/s and Mbit/s", "gbr_capacity:\n  uplink: 10Gbit/s\n  downlink: 800Mbit/s\n", 10e9, 800e6},
		{"one direction alone", "gbr_capacity: {downlink: 1Tbit/s}\n", 0, 1e12},
		{"a fraction, exactly", "gbr_capacity: {uplink: 2.5Gbit/s, downlink: 1.000001Mbit/s}\n", 2_500_000_000, 1_000_001},
		{"a space before the unit", "gbr_capacity: {uplink: 64 kbit/s}\n", 64e3, 0},
		{"bps forms, any case", "gbr_capacity: {uplink: 3gbps, downlink: 7KBIT/S}\n", 3e9, 7e3},
		{"plain bit/s", "gbr_capacity: {uplink: 1bit/s, downlink: 12bps}\n", 1, 12},
		{"trailing zeros of a fraction of a bit/s", "gbr_capacity: {uplink: 5.000bit/s}\n", 5, 0},
		{"0 alone, and 0 with a unit", "gbr_capacity: {uplink: 0, downlink: 0Gbit/s}\n", 0, 0},
		{"the most a uint64 counts", "gbr_capacity: {uplink: 18446744073709551615bit/s}\n", 18446744073709551615, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustParse(t, tc.text).GBRCapacity
			if want := (GBRCapacity{tc.uplink, tc.downlk}); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

// TestLoadGBRCapacity sets the key by variable and by flag, over the file.
func TestLoadGBRCapacity(t *testing.T) {
	file := writeFile(t, "gbr_capacity:\n  uplink: 1Gbit/s\n  downlink: 2Gbit/s\n")
	for _, tc := range []struct {
		name      string
		args, env []string
		want      GBRCapacity
	}{
		{"the file", []string{"--config", file}, nil, GBRCapacity{1e9, 2e9}},
		{"a variable over the file", []string{"--config", file}, []string{"UPFD_GBR_CAPACITY_UPLINK=5Gbit/s"}, GBRCapacity{5e9, 2e9}},
		{"a flag over a variable", []string{"--gbr_capacity.downlink=0"}, []string{"UPFD_GBR_CAPACITY_DOWNLINK=3Gbit/s"}, GBRCapacity{0, 0}},
		{"a flag with a space before its unit", []string{"--gbr_capacity.uplink", "10 Mbit/s"}, nil, GBRCapacity{10e6, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := Load(tc.args, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if c.GBRCapacity != tc.want {
				t.Errorf("got %+v, want %+v", c.GBRCapacity, tc.want)
			}
		})
	}
}

// TestGBRCapacityErrors: each bad value gets its place, its key and what to
// write, from the file, a variable and a flag.
func TestGBRCapacityErrors(t *testing.T) {
	const hint = "write a number and a unit (bit/s, kbit/s, Mbit/s, Gbit/s or Tbit/s), e.g. 10Gbit/s, or 0 for no limit"
	for _, tc := range []struct {
		name, text string
		args, env  []string
		want       string
	}{
		{name: "no unit", text: "gbr_capacity:\n  uplink: 10\n",
			want: `upfd.yaml:2: gbr_capacity.uplink: "10" has no unit; write it with one, e.g. 10Mbit/s or 10Gbit/s`},
		{name: "an unknown unit", text: "gbr_capacity:\n  downlink: 10GB/s\n",
			want: `upfd.yaml:2: gbr_capacity.downlink: "10GB/s" has unit "GB/s"; ` + hint},
		{name: "a packet rate", text: "gbr_capacity:\n  downlink: 10kpps\n",
			want: `upfd.yaml:2: gbr_capacity.downlink: "10kpps" has unit "kpps"; ` + hint},
		{name: "negative", text: "gbr_capacity: {uplink: -1Gbit/s}\n",
			want: `upfd.yaml:1: gbr_capacity.uplink: "-1Gbit/s" is negative; ` + hint},
		{name: "not a number", text: "gbr_capacity: {uplink: lots}\n",
			want: `upfd.yaml:1: gbr_capacity.uplink: "lots" is not a bit rate; ` + hint},
		{name: "an exponent", text: "gbr_capacity: {uplink: 1e9bit/s}\n",
			want: `upfd.yaml:1: gbr_capacity.uplink: "1e9bit/s" is not a bit rate; ` + hint},
		{name: "two points", text: "gbr_capacity: {uplink: 1.2.3Gbit/s}\n",
			want: `upfd.yaml:1: gbr_capacity.uplink: "1.2.3Gbit/s" is not a bit rate; ` + hint},
		{name: "empty", text: "gbr_capacity: {uplink: \"\"}\n",
			want: `upfd.yaml:1: gbr_capacity.uplink: empty; ` + hint},
		{name: "a fraction of a bit/s", text: "gbr_capacity: {uplink: 1.0000000001kbit/s}\n",
			want: `upfd.yaml:1: gbr_capacity.uplink: "1.0000000001kbit/s" has a fraction of a bit/s; round it to a whole number of bit/s`},
		{name: "beyond a uint64", text: "gbr_capacity: {uplink: 18446745Tbit/s}\n",
			want: `upfd.yaml:1: gbr_capacity.uplink: "18446745Tbit/s" is above 18446744073709551615 bit/s, the most upfd counts; lower it`},
		{name: "a list", text: "gbr_capacity: {uplink: [1Gbit/s]}\n",
			want: `upfd.yaml:1: gbr_capacity.uplink: got a list; want a bit rate such as 10Gbit/s`},
		{name: "a single value for the section", text: "gbr_capacity: 10Gbit/s\n",
			want: `upfd.yaml:1: gbr_capacity: got a single value; want gbr_capacity with keys uplink and downlink`},
		{name: "an unknown key", text: "gbr_capacity: {ul: 10Gbit/s}\n",
			want: `upfd.yaml:1: gbr_capacity.ul: unknown key; gbr_capacity takes uplink or downlink`},
		{name: "a variable without a unit", env: []string{"UPFD_GBR_CAPACITY_DOWNLINK=5"},
			want: `env UPFD_GBR_CAPACITY_DOWNLINK: "5" has no unit; write it with one, e.g. 5Mbit/s or 5Gbit/s`},
		{name: "a flag with a packet rate", args: []string{"--gbr_capacity.uplink=1Mpps"},
			want: `flag --gbr_capacity.uplink: "1Mpps" has unit "Mpps"; ` + hint},
		{name: "the section as a variable", env: []string{"UPFD_GBR_CAPACITY=10Gbit/s"},
			want: `env UPFD_GBR_CAPACITY: gbr_capacity is a section; set its keys one by one, e.g. UPFD_GBR_CAPACITY_UPLINK`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.text != "" {
				_, err = Parse("upfd.yaml", []byte(tc.text))
			} else {
				_, _, err = Load(tc.args, tc.env)
			}
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestBitRateTextRoundTrips: --help shows a capacity in the largest whole
// unit, and reading that back gives the same value.
func TestBitRateTextRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		v    uint64
		text string
	}{
		{0, "0"}, {1, "1bit/s"}, {1500, "1500bit/s"}, {64e3, "64kbit/s"}, {2_500_000_000, "2500Mbit/s"},
		{10e9, "10Gbit/s"}, {3e12, "3Tbit/s"}, {18446744073709551615, "18446744073709551615bit/s"},
	} {
		if got := yamlfile.BitRateText(tc.v); got != tc.text {
			t.Errorf("%d is shown as %s, want %s", tc.v, got, tc.text)
		}
		c, _, err := Load([]string{"--gbr_capacity.uplink=" + tc.text}, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.text, err)
			continue
		}
		want := Default()
		want.GBRCapacity.Uplink = tc.v
		if !reflect.DeepEqual(withoutSource(c), want) {
			t.Errorf("%s read back as %d", tc.text, c.GBRCapacity.Uplink)
		}
	}
}
