package report

import (
	"strconv"
	"strings"
)

// Churn is sessions deleted and established again while others forward.
type Churn struct {
	TargetPerSecond   float64 `json:"target_per_second"`
	AchievedPerSecond float64 `json:"achieved_per_second"`
	Seconds           float64 `json:"seconds"`
	Established       int     `json:"established"`
	Deleted           int     `json:"deleted"`
	Failed            int     `json:"failed"` // requests answered with a cause other than accepted, or not at all
	SetupP50Ms        float64 `json:"setup_p50_ms"`
	SetupP99Ms        float64 `json:"setup_p99_ms"`
}

// churnKind writes the rate churn achieved, its failures and setup times.
type churnKind struct{}

func (churnKind) has(s *Step) bool { return s.Churn != nil }

// AddChurn sets the result of the churn step h.
func (r *Run) AddChurn(h Header, c Churn) {
	r.step(h).Churn = &c
}

// churnTable has a row per step.
func churnTable(run *Run) *table {
	t := &table{left: 2, header: []string{"#", "Step", "Target<br>/s", "Achieved<br>/s", "Established", "Deleted", "Failed",
		"Setup p50<br>ms", "Setup p99<br>ms"}}
	for i, s := range run.Steps {
		if c := s.Churn; c != nil {
			t.add(strconv.Itoa(i+1), cell(s.Name), f1(c.TargetPerSecond), f1(c.AchievedPerSecond),
				strconv.Itoa(c.Established), strconv.Itoa(c.Deleted), strconv.Itoa(c.Failed), f2(c.SetupP50Ms), f2(c.SetupP99Ms))
		}
	}
	return t
}

func (churnKind) section(b *strings.Builder, run *Run) {
	if t := churnTable(run); len(t.rows) > 0 {
		t.write(b)
	}
}

func (churnKind) text(b *strings.Builder, run *Run) {
	if t := churnTable(run); len(t.rows) > 0 {
		t.writeText(b)
	}
}

func (churnKind) rows(s Step) []row {
	c := s.Churn
	if c == nil {
		return nil
	}
	return []row{{
		"through": "upf", "seconds": num(c.Seconds),
		"target_per_second": num(c.TargetPerSecond), "sessions_per_second": num(c.AchievedPerSecond),
		"failed": strconv.Itoa(c.Failed), "setup_p50_ms": num(c.SetupP50Ms), "setup_p99_ms": num(c.SetupP99Ms),
	}}
}

func (churnKind) compare(b *strings.Builder, rows []compared, ratio string) {
	t := &table{header: []string{"#", "UPF / Date", "Achieved<br>/s", "<br>" + ratio, "Failed", "Setup p99<br>ms"}}
	first := rows[0].step.Churn
	addRows(t, rows, func(s *Step) []string {
		c := s.Churn
		return []string{f1(c.AchievedPerSecond), ratioText(over(c.AchievedPerSecond, first.AchievedPerSecond, true)),
			strconv.Itoa(c.Failed), f2(c.SetupP99Ms)}
	})
	t.write(b)
}
