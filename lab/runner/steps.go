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

// A comparedKind's steps run alike through the UPF under test and, before
// it starts, through the reference forwarder: the kinds whose steps need
// it (scenario.Needs.Reference). It is listed in stepKinds as compared.
type comparedKind interface {
	// measure runs st through path with sessions, in m's lab. It pairs
	// each result with the reference forwarder's (pairReference) and, if
	// they are the step's own (ownResults), adds them to r.run.
	measure(ctx context.Context, r *runner, m *measurer, st scenario.Step, sessions []tgen.Session, path tgen.Path) error
}

// compared runs the steps of a comparedKind against the UPF under test.
type compared struct{ comparedKind }

func (c compared) run(ctx context.Context, r *runner, st scenario.Step) error {
	return c.measure(ctx, r, newMeasurer(r.lab, r.upf.pid()), st, r.sessions, tgen.UPF)
}

// step runs one step against the UPF under test.
func (r *runner) step(ctx context.Context, st scenario.Step) error {
	k, ok := stepKinds[st.Kind]
	if !ok {
		return fmt.Errorf("step kind %q is not run", st.Kind)
	}
	return k.run(ctx, r, st)
}

// referenceStep runs a step through the reference forwarder, if its kind
// is compared with it.
func (r *runner) referenceStep(ctx context.Context, m *measurer, st scenario.Step, sessions []tgen.Session) error {
	if c, ok := stepKinds[st.Kind].(comparedKind); ok {
		return c.measure(ctx, r, m, st, sessions, tgen.Wire)
	}
	return nil
}

// ownResults says whether what a step measured through path is its
// result: through the UPF under test, or through the reference forwarder
// when that is the UPF under test.
func (r *runner) ownResults(path tgen.Path) bool {
	return path == tgen.UPF || r.s.UPF.Kind == scenario.UPFReference
}

// pairReference pairs a result measured through path with the reference
// forwarder's under the same key: through the reference forwarder it
// keeps the result, through the UPF it points the result's reference at
// the one kept (nil if none was).
func pairReference[T any](refs map[string]*T, key string, path tgen.Path, result *T, reference **T) {
	if path == tgen.Wire {
		refs[key] = result
		return
	}
	*reference = refs[key]
}

// refKey names a result by step and direction, to pair it with the
// reference forwarder's.
func refKey(st scenario.Step, direction string) string { return st.Name + "/" + direction }

// refusedText says how much of the loss the lab's own devices refused.
func refusedText(m report.Measurement) string {
	if m.Refused == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d refused by the lab's veths)", m.Refused)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
