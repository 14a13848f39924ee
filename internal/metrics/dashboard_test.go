package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"testing"
)

const dashboardPath = "../../deploy/grafana/sluice-upf.json"

// dashboard is what the test reads of a Grafana dashboard.
type dashboard struct {
	UID        string `json:"uid"`
	Templating struct{ List []variable }
	Panels     []panel
}

type variable struct {
	Name, Type string
	Query      any
}

type panel struct {
	ID         int
	Type       string
	Title      string
	Datasource *struct{ Type, UID string }
	GridPos    struct{ H, W, X, Y int }
	Targets    []struct {
		Expr       string
		Datasource *struct{ Type, UID string }
	}
}

// The dashboard is valid JSON, takes its Prometheus data source as a
// variable, and charts every UPF metric and only those that exist.
func TestDashboardChartsEveryMetric(t *testing.T) {
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardPath, err)
	}
	if !slices.ContainsFunc(d.Templating.List, func(v variable) bool {
		return v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus"
	}) {
		t.Error("no datasource variable of type prometheus")
	}
	metric := regexp.MustCompile(`\b(upf_[a-z0-9_]+)`)
	exported := documented()
	charted := map[string]bool{}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d used twice", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.X+p.GridPos.W > 24 || p.GridPos.W == 0 {
			t.Errorf("panel %q: x %d, width %d", p.Title, p.GridPos.X, p.GridPos.W)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: data source %v, want the variable", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			if q.Datasource == nil || q.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: query data source %v, want the variable", p.Title, q.Datasource)
			}
			for _, m := range metric.FindAllStringSubmatch(q.Expr, -1) {
				if !slices.Contains(exported, m[1]) {
					t.Errorf("panel %q queries %s, which upfd does not export", p.Title, m[1])
				}
				charted[m[1]] = true
			}
		}
	}
	for _, m := range exported {
		if !charted[m] {
			t.Errorf("no panel charts %s", m)
		}
	}
}
