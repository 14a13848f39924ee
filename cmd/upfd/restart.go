package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/journal"
	"github.com/sluice-upf/sluice/internal/pfcp"
)

// A restart with pinning on keeps forwarding: the programs and maps stay
// in bpffs, and what N4 knows is in the state file, a journal written as
// it changes (pfcp.Server.Keep), whatever ends the process: SIGTERM, a
// crash, kill -9, the OOM killer. The journal names the maps it belongs
// to (their kernel IDs), so that it is never applied to other maps.

// pinned is the datapath with the journal of what N4 knows of it.
type pinned struct {
	d *datapath.Datapath
	j *journal.Journal
	// taken is the state to take back, nil if there is none for these maps.
	taken *pfcp.State
}

// loadDatapath loads the datapath's maps (the programs come later:
// LoadPrograms) and, pinned, opens the state file.
// Maps pinned by an earlier process come with its state; maps pinned
// without theirs hold sessions nobody knows any more, so they are removed
// and the datapath starts afresh, as a restarted UPF (the SMFs see a new
// Recovery Time Stamp).
func loadDatapath(opts datapath.Options, stateFile string, log *slog.Logger) (pinned, error) {
	d, err := datapath.LoadMaps(opts)
	if err != nil || opts.PinPath == "" {
		return pinned{d: d}, err
	}
	j, st, err := openState(stateFile, log)
	if err != nil {
		d.Close()
		return pinned{}, err
	}
	p := pinned{d: d, j: j}
	if !d.Reused() {
		return p, nil // a journal of maps that are gone: Keep writes it afresh
	}
	why := errors.New("no state file")
	if id, err := d.Identity(); err != nil {
		why = err
	} else if st != nil {
		why = st.For(id)
	}
	if why == nil {
		p.taken = st
		return p, nil
	}
	log.Warn("upfd: pinned maps without their state: removing them and starting afresh", "pin_path", opts.PinPath, "reason", why)
	if err := errors.Join(d.Unpin(), d.Close()); err != nil {
		j.Close()
		return pinned{}, err
	}
	p.d, err = datapath.LoadMaps(opts)
	return p, err
}

// openState opens the journal and reads the state it holds. One that does
// not read (another program's file, a bug) is set aside as path.bad, for
// whoever wants to look, and a new one begun: st is then nil.
func openState(path string, log *slog.Logger) (*journal.Journal, *pfcp.State, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("state file: %w", err)
	}
	start := time.Now()
	j, st, err := pfcp.OpenState(path)
	if err == nil {
		log.Info("upfd: state file read", "state_file", path, "records", st.Tail.Records, "took", time.Since(start).Round(time.Millisecond))
		if st.Tail.Cut > 0 {
			log.Warn("upfd: the state file ended in a record cut short (a crash while writing, or a full disk): the last whole one counts",
				"state_file", path, "records", st.Tail.Records, "bytes_cut", st.Tail.Cut)
		}
		return j, st, nil
	}
	if j != nil {
		j.Close()
	}
	log.Error("upfd: the state file does not read; setting it aside and starting afresh", "state_file", path, "err", err)
	if err := os.Rename(path, path+".bad"); err != nil {
		return nil, nil, fmt.Errorf("state file: %w", err)
	}
	j, st, err = pfcp.OpenState(path)
	if err != nil {
		return nil, nil, fmt.Errorf("state file: %w", err)
	}
	return j, nil, nil
}

// takeOver restores N4's state into srv and, after a crash, has the maps
// match it. A state that does not restore is set aside (path.bad), so
// that the next start begins afresh rather than failing again.
func (p pinned) takeOver(srv *pfcp.Server, stateFile string, log *slog.Logger) error {
	if p.taken == nil {
		return nil
	}
	start := time.Now()
	if err := srv.Restore(p.taken); err != nil {
		p.j.Close()
		return errors.Join(err, os.Rename(stateFile, stateFile+".bad"))
	}
	if p.taken.Clean {
		return nil
	}
	restored := time.Now()
	t, err := srv.Reconcile(p.d)
	if err != nil {
		return err
	}
	log.Info("upfd: took over after a crash: the maps compared with the state", "sessions", p.taken.Sessions(),
		"repaired", t.Repaired, "stray_entries_removed", t.Strays, "sessions_deleted", t.Deleted,
		"restore_took", restored.Sub(start).Round(time.Millisecond), "compare_took", time.Since(restored).Round(time.Millisecond))
	return nil
}

// keep starts the journal for srv: the state now, then every change.
func (p pinned) keep(srv *pfcp.Server, fsync bool) error {
	if p.j == nil {
		return nil
	}
	id, err := p.d.Identity()
	if err != nil {
		return err
	}
	return srv.Keep(p.j, id, fsync)
}
