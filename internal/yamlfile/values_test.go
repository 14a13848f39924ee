package yamlfile

import (
	"testing"
	"time"
)

// TestNumber pins the one rule for numbers in upfd.yaml and in scenarios:
// '_' may stand between two digits, as in Go.
func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		text, digits string
		decimal, ok  bool
	}{
		{"100000", "100000", false, true},
		{"100_000", "100000", false, true},
		{"1_000_000", "1000000", false, true},
		{"-3", "-3", false, true},
		{"+3", "+3", false, true},
		{"1_500.25", "1500.25", true, true},
		{"1.5", "1.5", false, false},
		{"_100", "", false, false},
		{"100_", "", false, false},
		{"1__0", "", false, false},
		{"1_.5", "", true, false},
		{"--3", "", false, false},
		{"1e5", "", false, false},
		{"0x10", "", false, false},
		{"", "", false, false},
		{"1.2.3", "", true, false},
	} {
		digits, ok := Number(tc.text, tc.decimal)
		if ok != tc.ok || (ok && digits != tc.digits) {
			t.Errorf("Number(%q, %v) = %q, %v; want %q, %v", tc.text, tc.decimal, digits, ok, tc.digits, tc.ok)
		}
	}
}

func TestParseCount(t *testing.T) {
	parse := ParseCount(Range{Min: 1, Max: 64})
	for text, want := range map[string]string{
		"100":                  `"100" is out of range; want 1 to 64`,
		"0":                    `"0" is out of range; want 1 to 64`,
		"many":                 `"many" is not a whole number; want 1 to 64`,
		"1__0":                 `"1__0" is not a whole number; want 1 to 64`,
		"99999999999999999999": `"99999999999999999999" is out of range; want 1 to 64`,
	} {
		if _, err := parse(text); err == nil || err.Error() != want {
			t.Errorf("%q: got %v; want %s", text, err, want)
		}
	}
	if n, err := ParseCount(Range{Min: 1})("1_000"); n != 1000 || err != nil {
		t.Errorf("1_000: got %d, %v", n, err)
	}
}

func TestParseDuration(t *testing.T) {
	parse := ParseDuration("2s")
	if d, err := parse("1m30s"); d != 90*time.Second || err != nil {
		t.Errorf("1m30s: got %v, %v", d, err)
	}
	for text, want := range map[string]string{
		"":      "empty; write a duration such as 2s",
		"5":     `"5" has no unit; write it with one, e.g. 5s or 5ms`,
		"1_000": `"1_000" has no unit; write it with one, e.g. 1_000s or 1_000ms`,
		"1d":    `"1d" is not a duration; write a number and a unit (ns, us, ms, s, m or h), e.g. 2s`,
	} {
		if _, err := parse(text); err == nil || err.Error() != want {
			t.Errorf("%q: got %v; want %s", text, err, want)
		}
	}
}

func TestParseBitRate(t *testing.T) {
	for text, want := range map[string]uint64{
		"0": 0, "10Gbit/s": 10e9, "1.5 Gbps": 1.5e9, "1_000kbit/s": 1e6, "567.2kbps": 567_200, "2tbps": 2e12,
	} {
		if got, err := ParseBitRate(text); got != want || err != nil {
			t.Errorf("%q: got %d, %v; want %d", text, got, err, want)
		}
	}
	for _, bad := range []string{"", "10", "-1Gbit/s", "+1Gbit/s", "1.5bit/s", "10 Gbyte/s", "1__0Gbit/s", "fast"} {
		if got, err := ParseBitRate(bad); err == nil {
			t.Errorf("%q: took it as %d", bad, got)
		}
	}
	for v, want := range map[uint64]string{0: "0", 10e9: "10Gbit/s", 1_500_000: "1500kbit/s", 7: "7bit/s"} {
		if got := BitRateText(v); got != want {
			t.Errorf("BitRateText(%d) = %s; want %s", v, got, want)
		}
	}
}

func TestOneOf(t *testing.T) {
	parse := OneOf("a mode", "native", "generic")
	if _, err := parse("skb"); err == nil || err.Error() != `"skb" is not a mode; want native or generic` {
		t.Errorf("skb: %v", err)
	}
}
