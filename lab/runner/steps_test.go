package runner

import (
	"testing"

	"github.com/sluice-upf/sluice/lab/scenario"
)

// TestEveryKindRuns: every kind of step a scenario may hold has its
// runner, measured through the reference forwarder when its steps ask.
func TestEveryKindRuns(t *testing.T) {
	for _, kind := range scenario.Kinds {
		s, err := scenario.Parse("kind.yaml", []byte("steps: [{kind: "+kind+"}]"))
		if err != nil {
			t.Fatal(err)
		}
		k, ok := stepKinds[kind]
		if !ok {
			t.Errorf("%s steps are not run: add the kind to stepKinds", kind)
			continue
		}
		if _, compared := k.(comparedKind); compared != s.Steps[0].ComparedToReference() {
			t.Errorf("%s steps: through the reference forwarder %v; the scenario asks %v", kind, compared, s.Steps[0].ComparedToReference())
		}
	}
	if len(stepKinds) != len(scenario.Kinds) {
		t.Errorf("%d kinds run; the scenario has %d", len(stepKinds), len(scenario.Kinds))
	}
}
