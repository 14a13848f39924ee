package scenario

import (
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindBuffering checks downlink buffering (BUFF|NOCP) and its flush.
const KindBuffering = "buffering"

// Buffering establishes a session whose downlink FAR buffers and notifies
// the SMF (BUFF|NOCP), with a BAR that suggests Bound frames; the DN host
// sends the UE Frames datagrams, Interval apart, and Hold later the SMF
// makes the FAR forward, after which After more are sent. Exactly one
// Downlink Data Report must come, nothing may pass while buffering, and
// every buffered frame must arrive in order before those sent after. With
// Overflow, a second session is sent Bound + Overflow: the frames within
// the bound must arrive all the same.
type Buffering struct {
	Frames, Bound, Overflow, After int
	Interval, Hold                 time.Duration
}

func defaultBuffering() Settings {
	return &Buffering{Frames: 32, Bound: 64, Overflow: 32, After: 10, Interval: time.Millisecond, Hold: 500 * time.Millisecond}
}

func (b *Buffering) fields(d *decoder) []field {
	return []field{
		{"frames", value(d, &b.Frames, "a number such as 32", parseCount(countRange{1, 255}))},
		{"bound", value(d, &b.Bound, "a number such as 64", parseCount(countRange{1, 255}))},
		{"overflow", value(d, &b.Overflow, "a number such as 32, or 0", parseCount(countRange{0, 10_000}))},
		{"after", value(d, &b.After, "a number such as 10", parseCount(countRange{1, 10_000}))},
		{"interval", value(d, &b.Interval, "a duration such as 1ms", parseDuration)},
		{"hold", value(d, &b.Hold, "a duration such as 500ms", parseDuration)},
	}
}

func (b *Buffering) validate(v *validator, path string, s *Scenario) {
	v.withPFCP(path, s)
	if b.Frames > b.Bound {
		v.add(yamlfile.KeyPath(path, "frames"), "%d is more than the bound of %d; the frames within it must all arrive, so send at most that many (overflow sends more)",
			b.Frames, b.Bound)
	}
}

func (b *Buffering) setup() string {
	text := fmt.Sprintf("%d frames buffered (BUFF|NOCP, a BAR suggesting %d), forwarded %s later, %d after", b.Frames, b.Bound, b.Hold, b.After)
	if b.Overflow > 0 {
		text += fmt.Sprintf("; then %d past the bound", b.Overflow)
	}
	return text
}

func (b *Buffering) derivedName() string { return "buffering" }

func (b *Buffering) estimate() time.Duration {
	return 2 * (b.Hold + times(b.Bound+b.Overflow+b.After, b.Interval) + 200*time.Millisecond)
}

func (*Buffering) needs() Needs { return Needs{} }
