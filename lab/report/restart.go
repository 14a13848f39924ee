package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Restart is the UPF under test restarted under steady traffic: what each
// direction lost across it, how long the UPF took to answer N4 again, and
// whether the SMF's sessions outlived it.
type Restart struct {
	// Signal ended the UPF: SIGTERM (a restart), SIGKILL (a crash step).
	// A file from before crash steps has none: SIGTERM.
	Signal    string  `json:"signal,omitempty"`
	AtSeconds float64 `json:"at_seconds"` // into the traffic, when the UPF got the signal
	StopMs    float64 `json:"stop_ms"`    // the signal to the process's exit
	RestartMs float64 `json:"restart_ms"` // the signal to the new process answering a Heartbeat Request
	// RecoveryBefore is the UPF's Recovery Time Stamp when the SMF
	// associated; RecoveryAfter, in the first Heartbeat Response after
	// the restart. An SMF that sees it change drops its sessions (TS
	// 29.244 §6.2.2).
	RecoveryBefore time.Time `json:"recovery_before"`
	RecoveryAfter  time.Time `json:"recovery_after"`
	// Sessions is the SMF's sessions, each sent a Session Modification
	// Request after the restart; SessionsAccepted, those the restarted UPF
	// accepted: it knew them.
	Sessions         int                `json:"sessions"`
	SessionsAccepted int                `json:"sessions_accepted"`
	Directions       []RestartDirection `json:"directions"`
}

// SignalName is the signal that ended the UPF.
func (r Restart) SignalName() string {
	if r.Signal == "" {
		return "SIGTERM"
	}
	return r.Signal
}

// SameRecovery says whether the SMF would see the same UPF after the restart.
func (r Restart) SameRecovery() bool {
	return !r.RecoveryBefore.IsZero() && r.RecoveryBefore.Equal(r.RecoveryAfter)
}

// RestartDirection is one direction of the traffic across a restart, as
// the sink counted it.
type RestartDirection struct {
	Measurement
	Lost       uint64 `json:"lost_packets"` // sent and never received
	Duplicates uint64 `json:"duplicates"`   // received more than once
	Reordered  uint64 `json:"reordered"`    // received after a later one of the flow
	// SentWhileAway is the frames sent from the signal until N4 answered
	// again: what crossed the datapath with no UPF process, or one
	// starting, to look after it.
	SentWhileAway uint64 `json:"sent_while_away"`
}

// restartKind writes what each direction lost across a restart, and how
// the restart went.
type restartKind struct{}

func (restartKind) has(s *Step) bool { return s.Restart != nil }

// AddRestart sets the result of the restart step h.
func (r *Run) AddRestart(h Header, x Restart) {
	r.step(h).Restart = &x
}

// The footnotes of the restart table.
const (
	awayNote     = "From the signal to the first Heartbeat Response from the new process: the UPF away, or starting."
	recoveryNote = "The UPF's Recovery Time Stamp in that response against the one it gave at association: an SMF that sees it change drops its sessions."
	sessionsNote = "The SMF's sessions after the restart, each modified (Session Modification Request), accepted of sent."
)

// restartTables are the frames each direction lost across a restart and
// the restart's times; step writes a step's cell.
func restartTables(run *Run, step func(Header) string) (frames, restarts *table) {
	frames = &table{left: 3, header: []string{"#", "Step", "Direction", "Tx<br>Kpps", "Sent", "of which while<br>the UPF was away[1]", "Received", "Lost", "Loss %", "Duplicates", "Reordered", "Latency max<br>µs"}}
	restarts = &table{left: 3, header: []string{"#", "Step", "Signal", "at<br>s", "Stopped in<br>ms", "N4 again after<br>ms[1]", "Recovery Time Stamp[2]", "Sessions<br>after[3]"}}
	for i, s := range run.Steps {
		x := s.Restart
		if x == nil {
			continue
		}
		for _, d := range x.Directions {
			frames.add(strconv.Itoa(i+1), step(s.Header), d.Direction, f2(d.TxKpps), count(d.TxPackets), count(d.SentWhileAway),
				count(d.RxPackets), count(d.Lost), lossText(d.LossPct), count(d.Duplicates), count(d.Reordered), latencyMax(d.Latency))
		}
		restarts.add(strconv.Itoa(i+1), cell(s.Name), x.SignalName(), f2(x.AtSeconds), f1(x.StopMs), f1(x.RestartMs),
			recoveryText(*x), fmt.Sprintf("%d/%d", x.SessionsAccepted, x.Sessions))
	}
	return frames, restarts
}

func (restartKind) section(b *strings.Builder, run *Run) {
	frames, restarts := restartTables(run, stepCell)
	if len(restarts.rows) == 0 {
		return
	}
	frames.write(b)
	restarts.write(b)
	fmt.Fprintf(b, "1. %s\n2. %s\n3. %s\n\n", awayNote, recoveryNote, sessionsNote)
}

func (restartKind) text(b *strings.Builder, run *Run) {
	frames, restarts := restartTables(run, func(h Header) string { return h.Name })
	if len(restarts.rows) == 0 {
		return
	}
	frames.writeText(b)
	b.WriteString("\n")
	restarts.writeText(b, "[1] "+awayNote, "[2] "+recoveryNote, "[3] "+sessionsNote)
}

func latencyMax(l *Latency) string {
	if l == nil {
		return "–"
	}
	return f1(l.Max)
}

func recoveryText(x Restart) string {
	switch {
	case x.RecoveryAfter.IsZero():
		return "no answer"
	case x.SameRecovery():
		return "unchanged"
	}
	return "changed: " + x.RecoveryAfter.UTC().Format(time.RFC3339)
}

// rows are a row per direction, each with the restart's figures.
func (restartKind) rows(s Step) []row {
	if s.Restart == nil {
		return nil
	}
	x := *s.Restart
	var rows []row
	for _, d := range x.Directions {
		r := measurementRow(d.Measurement, "upf", row{
			"lost_packets": count(d.Lost), "duplicates": count(d.Duplicates), "reordered": count(d.Reordered),
			"sent_while_away": count(d.SentWhileAway),
			"signal":          x.SignalName(),
			"stop_ms":         num(x.StopMs), "restart_ms": num(x.RestartMs),
			"recovery_unchanged": strconv.FormatBool(x.SameRecovery()),
			"failed":             strconv.Itoa(x.Sessions - x.SessionsAccepted),
		})
		rows = append(rows, r)
	}
	return rows
}

// compare sets the runs' restarts side by side: frames lost each way, and
// the time to answer N4 again (ratios: lower is better).
func (restartKind) compare(b *strings.Builder, rows []compared, ratio string) {
	t := &table{header: []string{"#", "UPF / Date", "UpLink<br>lost", "DownLink<br>lost", "N4 again after<br>ms", "<br>" + ratio, "Recovery Time Stamp", "Sessions<br>after"}}
	first := rows[0].step.Restart
	addRows(t, rows, func(s *Step) []string {
		x := s.Restart
		return []string{lostIn(x, "uplink"), lostIn(x, "downlink"), f1(x.RestartMs),
			ratioText(over(x.RestartMs, first.RestartMs, true)), recoveryText(*x),
			fmt.Sprintf("%d/%d", x.SessionsAccepted, x.Sessions)}
	})
	t.write(b)
}

// lostIn is the frames lost in direction, as "12 (0.01 %)", or a dash.
func lostIn(x *Restart, direction string) string {
	for _, d := range x.Directions {
		if d.Direction == direction {
			return fmt.Sprintf("%d (%s %%)", d.Lost, lossText(d.LossPct))
		}
	}
	return "–"
}
