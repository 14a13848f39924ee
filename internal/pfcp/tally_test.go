package pfcp

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A flood of one kind is its first line, then a count each interval.
func TestTallyLogsAFloodAsCounts(t *testing.T) {
	var out bytes.Buffer
	q := newTally(slog.New(slog.NewTextHandler(&out, nil)))
	now := time.Unix(1_800_000_000, 0)
	q.sum(now) // the first interval starts
	for range 1000 {
		q.note(slog.LevelInfo, "pfcp: request unanswered", "to", "198.18.4.1:8805")
	}
	q.note(slog.LevelWarn, "pfcp: request from a peer that is not allowed", "from", "198.18.7.10:8805")
	q.sum(now.Add(time.Second)) // within the interval: nothing yet
	q.sum(now.Add(tallyEvery))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[2], `msg="pfcp: request unanswered (and more like it)" more=999`) {
		t.Errorf("log:\n%s\nwant two first lines and one count of 999 more", out.String())
	}
}
