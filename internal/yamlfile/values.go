package yamlfile

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The parsers below turn one value of a file into its Go form, alike in
// upfd's config and the lab's scenarios. Their errors are the part after
// "file:line: key: " and end with what to write.

// Number checks s against the one rule for numbers in both files: an
// optional sign, then digits that single '_'s may group, as Go writes
// them (100_000), and for a decimal at most one '.' among the digits. It
// returns s without its '_'s.
func Number(s string, decimal bool) (string, bool) {
	unsigned := strings.TrimLeft(s, "+-")
	whole, frac, hasPoint := strings.Cut(unsigned, ".")
	ok := len(s)-len(unsigned) <= 1 && grouped(whole) && (!hasPoint || decimal && grouped(frac))
	return strings.ReplaceAll(s, "_", ""), ok
}

// grouped reports whether s is digits with single '_'s between them.
func grouped(s string) bool {
	for group := range strings.SplitSeq(s, "_") {
		if !IsDigits(group) {
			return false
		}
	}
	return true
}

// IsDigits reports whether s is one or more of 0 to 9 and nothing else.
func IsDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// Range is the span of a whole-number key, both ends included; Max 0
// means no upper end.
type Range struct{ Min, Max int }

func (r Range) String() string {
	if r.Max == 0 {
		return fmt.Sprintf("%d or more", r.Min)
	}
	return fmt.Sprintf("%d to %d", r.Min, r.Max)
}

// Holds reports whether n is in r.
func (r Range) Holds(n int) bool { return n >= r.Min && (r.Max == 0 || n <= r.Max) }

// ParseWhole reads a whole number (see Number); want says what to write
// instead, e.g. "1 to 64".
func ParseWhole(s, want string) (int, error) {
	digits, ok := Number(s, false)
	if !ok {
		return 0, fmt.Errorf("%s is not a whole number; want %s", Quote(s), want)
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		// Only a number too large fails here; Number keeps it to digits.
		return 0, fmt.Errorf("%s is out of range; want %s", Quote(s), want)
	}
	return n, nil
}

// ParseCount returns a parser of whole numbers in r.
func ParseCount(r Range) func(string) (int, error) {
	return func(s string) (int, error) {
		n, err := ParseWhole(s, r.String())
		if err == nil && !r.Holds(n) {
			return 0, fmt.Errorf("%s is out of range; want %s", Quote(s), r)
		}
		return n, err
	}
}

// ParseDuration returns a parser of Go durations ("10s", "500ms",
// "1m30s"), of any sign; example is one to suggest.
func ParseDuration(example string) func(string) (time.Duration, error) {
	return func(s string) (time.Duration, error) {
		if d, err := time.ParseDuration(s); err == nil {
			return d, nil
		}
		switch _, number := Number(s, true); {
		case s == "":
			return 0, fmt.Errorf("empty; write a duration such as %s", example)
		case number:
			return 0, fmt.Errorf("%s has no unit; write it with one, e.g. %ss or %sms", Quote(s), s, s)
		}
		return 0, fmt.Errorf("%s is not a duration; write a number and a unit (ns, us, ms, s, m or h), e.g. %s",
			Quote(s), example)
	}
}

// ParseBool reads true or false, as YAML 1.2 writes them (not yes, on, 1).
func ParseBool(s string) (bool, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%s is not true or false", Quote(s))
}

// OneOf returns a parser that takes one of words, as written; what names
// them in the error, as "a mode".
func OneOf(what string, words ...string) func(string) (string, error) {
	return func(s string) (string, error) {
		for _, w := range words {
			if s == w {
				return s, nil
			}
		}
		return "", fmt.Errorf("%s is not %s; want %s", Quote(s), what, OrList(words))
	}
}

// BitRateUnits are the units a bit rate may carry, largest first: each
// name, its bps form, and its worth in bit/s as a power of ten. Case does
// not matter.
var BitRateUnits = []struct {
	Name, BPS string
	Scale     uint64
	Exponent  int
}{
	{"Tbit/s", "Tbps", 1e12, 12}, {"Gbit/s", "Gbps", 1e9, 9}, {"Mbit/s", "Mbps", 1e6, 6},
	{"kbit/s", "kbps", 1e3, 3}, {"bit/s", "bps", 1, 0},
}

// SplitUnit cuts "1.5 Mpps" into "1.5" and "Mpps".
func SplitUnit(s string) (number, unit string) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool {
		return (r < '0' || r > '9') && !strings.ContainsRune(".-+_", r)
	})
	if i < 0 {
		return s, ""
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i:])
}

// BitRateExponent is the power of ten that unit, one of BitRateUnits, is
// worth in bit/s; ok is false for another unit.
func BitRateExponent(unit string) (exponent int, ok bool) {
	for _, u := range BitRateUnits {
		if strings.EqualFold(unit, u.Name) || strings.EqualFold(unit, u.BPS) {
			return u.Exponent, true
		}
	}
	return 0, false
}

// ParseBitRate reads a bit rate: a decimal number (see Number) and one of
// BitRateUnits, or 0 alone. It is exact: 1.5Gbit/s is 1500000000 bit/s,
// and a fraction of a bit/s is refused.
func ParseBitRate(s string) (uint64, error) {
	text := strings.TrimRight(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ/ ")
	unit := strings.TrimSpace(s[len(text):])
	number, decimal := Number(text, true)
	exponent, known := BitRateExponent(unit)
	hint := "write a number and a unit (bit/s, kbit/s, Mbit/s, Gbit/s or Tbit/s), e.g. 10Gbit/s, or 0 for no limit"
	switch {
	case s == "":
		return 0, fmt.Errorf("empty; %s", hint)
	case strings.HasPrefix(s, "-"):
		return 0, fmt.Errorf("%s is negative; %s", Quote(s), hint)
	case !decimal || strings.HasPrefix(s, "+"):
		return 0, fmt.Errorf("%s is not a bit rate; %s", Quote(s), hint)
	case unit == "" && strings.Trim(number, "0.") == "":
		return 0, nil
	case unit == "":
		return 0, fmt.Errorf("%s has no unit; write it with one, e.g. %sMbit/s or %sGbit/s", Quote(s), text, text)
	case !known:
		return 0, fmt.Errorf("%s has unit %s; %s", Quote(s), Quote(unit), hint)
	}
	return scaleDecimal(s, number, exponent)
}

// scaleDecimal is the decimal number times ten to the exponent, exactly,
// as a whole number; s is the value as written, for errors.
func scaleDecimal(s, number string, exponent int) (uint64, error) {
	whole, frac, _ := strings.Cut(number, ".")
	if len(frac) > exponent {
		if strings.Trim(frac[exponent:], "0") != "" {
			return 0, fmt.Errorf("%s has a fraction of a bit/s; round it to a whole number of bit/s", Quote(s))
		}
		frac = frac[:exponent]
	}
	n, err := strconv.ParseUint(whole+frac+strings.Repeat("0", exponent-len(frac)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is above %d bit/s, the most upfd counts; lower it", Quote(s), uint64(math.MaxUint64))
	}
	return n, nil
}

// BitRateText writes bit/s in the largest unit that keeps it whole: 10Gbit/s.
func BitRateText(v uint64) string {
	if v == 0 {
		return "0"
	}
	for _, u := range BitRateUnits {
		if v%u.Scale == 0 {
			return strconv.FormatUint(v/u.Scale, 10) + u.Name
		}
	}
	return strconv.FormatUint(v, 10) + "bit/s" // not reached: bit/s divides all
}
