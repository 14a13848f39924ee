package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/tgen"
)

// stepKinds run each kind of step, by its name in scenario.Kinds. A kind
// is a type in a file of its own (churn.go, restart.go, ...); adding one
// is that file and a line here.
var stepKinds = map[string]stepKind{
	scenario.KindThroughput:        compared{throughputKind{}},
	scenario.KindNDR:               compared{ndrKind{}},
	scenario.KindPing:              pingKind{},
	scenario.KindCBR:               cbrKind{},
	scenario.KindSubscribers:       compared{subscribersKind{}},
	scenario.KindChurn:             churnKind{},
	scenario.KindRestart:           judgedKind{restartKind{}, report.RestartChecks},
	scenario.KindCrash:             judgedKind{crashKind{}, report.RestartChecks},
	scenario.KindIperf:             iperfKind{},
	scenario.KindWeb:               webKind{},
	scenario.KindPolicing:          policingKind{},
	scenario.KindUsage:             usageKind{},
	scenario.KindIsolation:         isolationKind{},
	scenario.KindOverload:          overloadKind{},
	scenario.KindAbuse:             abuseKind{},
	scenario.KindRuleLatency:       ruleLatencyKind{},
	scenario.KindHandover:          handoverKind{},
	scenario.KindBuffering:         bufferingKind{},
	scenario.KindChurnUnderTraffic: churnUnderTrafficKind{},
}

// A stepKind runs the steps of one kind.
type stepKind interface {
	// run runs st against the UPF under test and adds its results, or
	// what of them it has, to r.run.
	run(ctx context.Context, r *runner, st scenario.Step) error
}

// A comparedKind's steps run alike through the UPF under test and through
// the reference forwarder, in turn: the kinds whose steps need it
// (scenario.Needs.Reference). It is listed in stepKinds as compared.
type comparedKind interface {
	// measure runs st through each of targets, the UPF under test first,
	// then the reference forwarder if the run measures it, and adds the
	// results to r.run, the reference's beside the UPF's.
	measure(ctx context.Context, r *runner, st scenario.Step, targets []target) error
}

// compared runs the steps of a comparedKind.
type compared struct{ comparedKind }

func (c compared) run(ctx context.Context, r *runner, st scenario.Step) error {
	return c.measure(ctx, r, st, r.targets())
}

// target is what a compared step's traffic crosses: the UPF under test,
// or the reference forwarder in its own lab.
type target struct {
	name     string // for the progress lines
	m        *measurer
	sessions []tgen.Session
	path     tgen.Path
}

// targets are what the compared steps measure: the UPF under test and,
// when the run measures it, the reference forwarder in the twin. When the
// reference forwarder is the UPF under test, it is in the UPF's namespace.
func (r *runner) targets() []target {
	var upf target
	if r.s.UPF.Kind == scenario.UPFReference {
		upf = r.referenceTarget(r.lab)
	} else {
		upf = target{name: r.s.UPF.Name, m: newMeasurer(r.lab, r.upf.pid()), sessions: r.sessions, path: tgen.UPF}
	}
	if r.refLab == nil {
		return []target{upf}
	}
	return []target{upf, r.referenceTarget(*r.refLab)}
}

// turns is the order in which n targets take round i: the UPF under test
// first in odd rounds, last in even ones, so that neither side always
// follows the other.
func turns(i, n int) []int {
	order := make([]int, n)
	for k := range order {
		order[k] = k
		if i%2 == 0 {
			order[k] = n - 1 - k
		}
	}
	return order
}

// step runs one step against the UPF under test.
func (r *runner) step(ctx context.Context, st scenario.Step) error {
	k, ok := stepKinds[st.Kind]
	if !ok {
		return fmt.Errorf("step kind %q is not run", st.Kind)
	}
	return k.run(ctx, r, st)
}

// refusedText says how much of the loss the lab's own devices refused.
func refusedText(m report.Measurement) string {
	if m.Refused == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d refused by the lab's veths)", m.Refused)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
