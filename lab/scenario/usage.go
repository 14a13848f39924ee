package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindUsage checks a UPF's usage reports and quotas against what the sink
// counted.
const KindUsage = "usage"

// Usage sends bursts of known frames both ways through sessions of its
// own, between the reports of their URR, so that each report must carry
// exactly what the sinks received since the last: Reports periodic reports
// (every Period), as many volume threshold reports (Threshold), and the
// final one of the deletion. Then a volume quota (Quota) must let no byte
// past it, and traffic under a time quota (TimeQuota) must stop within
// Within of its expiry.
type Usage struct {
	Size      Size
	Burst     int // frames each way in a burst
	Period    time.Duration
	Reports   int
	Threshold uint64        // bytes; 0: no threshold check
	Quota     uint64        // bytes; 0: no volume quota check
	TimeQuota time.Duration // 0: no time quota check
	Within    time.Duration
}

func defaultUsage() Settings {
	return &Usage{Size: Size{Bytes: 1400}, Burst: 100, Period: time.Second, Reports: 3,
		Threshold: 1_000_000, Quota: 1_000_000, TimeQuota: 2 * time.Second, Within: time.Second}
}

func (u *Usage) fields(d *decoder) []field {
	return []field{
		{"size", value(d, &u.Size, "a size such as 1400", parseSize)},
		{"burst", value(d, &u.Burst, "a number such as 100", parseCount(countRange{1, 10_000}))},
		{"period", value(d, &u.Period, "a duration such as 1s", parseWholeSeconds)},
		{"reports", value(d, &u.Reports, "a number such as 3", parseCount(countRange{1, 100}))},
		{"threshold", value(d, &u.Threshold, "a volume such as 1MB, or 0", parseVolumeOrNone)},
		{"quota", value(d, &u.Quota, "a volume such as 1MB, or 0", parseVolumeOrNone)},
		{"time_quota", value(d, &u.TimeQuota, "a duration such as 2s, or 0", parseSecondsOrNone)},
		{"within", value(d, &u.Within, "a duration such as 1s", parseDuration)},
	}
}

// parseWholeSeconds reads a duration that PFCP's time IEs carry: whole
// seconds (§8.2.48).
func parseWholeSeconds(s string) (time.Duration, error) {
	d, err := parseDuration(s)
	if err == nil && d%time.Second != 0 {
		return 0, fmt.Errorf("%s is not whole seconds, which PFCP's time IEs carry; want e.g. 1s or 2s", yamlfile.Quote(s))
	}
	return d, err
}

// parseSecondsOrNone is parseWholeSeconds that also takes 0: no check.
func parseSecondsOrNone(s string) (time.Duration, error) {
	if strings.TrimSpace(s) == "0" {
		return 0, nil
	}
	return parseWholeSeconds(s)
}

// parseVolumeOrNone is parseBytes that also takes 0: no check.
func parseVolumeOrNone(s string) (uint64, error) {
	if strings.TrimSpace(s) == "0" {
		return 0, nil
	}
	return parseBytes(s)
}

func (u *Usage) validate(v *validator, path string, s *Scenario) {
	v.withPFCP(path, s)
	if u.Size.IMIX {
		v.add(yamlfile.KeyPath(path, "size"), "the bursts are of one size, to count them to the byte; want e.g. 1400")
	}
}

func (u *Usage) setup() string {
	parts := []string{fmt.Sprintf("%d periodic reports every %s", u.Reports, u.Period)}
	if u.Threshold > 0 {
		parts = append(parts, fmt.Sprintf("%d at a threshold of %s", u.Reports, bytesWord(u.Threshold)))
	}
	parts = append(parts, "the final one")
	if u.Quota > 0 {
		parts = append(parts, "volume quota "+bytesWord(u.Quota))
	}
	if u.TimeQuota > 0 {
		parts = append(parts, fmt.Sprintf("time quota %s, stopped within %s", u.TimeQuota, u.Within))
	}
	return fmt.Sprintf("%s; bursts of %d × %s each way", strings.Join(parts, ", "), u.Burst, bytesText(u.Size.String()))
}

func (u *Usage) derivedName() string { return "usage" }

// estimate: the first periodic report, the periods after it, a second a
// threshold report, the quotas.
func (u *Usage) estimate() time.Duration {
	d := times(u.Reports+1, u.Period) + times(u.Reports, time.Second)
	if u.Quota > 0 {
		d += time.Second
	}
	if u.TimeQuota > 0 {
		d += u.TimeQuota + u.Within + time.Second
	}
	return d
}

func (*Usage) needs() Needs { return Needs{} }
