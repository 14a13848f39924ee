package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// UPFDLab is the start of a config for upfd in NewLab's UPF namespace:
// N4 towards the SMF, N3 and N6, the DN internet with the UE pool. A test
// adds the top-level keys it needs.
const UPFDLab = `node_id: 198.18.4.2
pfcp:
  listen: 198.18.4.2:8805
  peers: [198.18.4.1]
interfaces:
  - {name: n3, role: n3, address: 198.18.3.2}
  - {name: n6, role: n6}
dnns:
  - {name: internet, pools: [10.45.0.0/16]}
`

// StopGrace is how long a stopped upfd has to exit after SIGTERM before it
// gets SIGKILL.
const StopGrace = 10 * time.Second

var (
	buildOnce sync.Once
	buildDir  string // sluice-upfd-<pid>-*, removed by Main
	buildBin  string
	buildErr  error
)

// Main runs a package's tests and removes what BuildUPFD built: call it
// as os.Exit(testenv.Main(m)) from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	return code
}

// BuildUPFD builds ./cmd/upfd once per test binary, into a temporary
// directory that Main removes (or, should the process die first, the next
// build of another test process), and returns the binary's path.
func BuildUPFD(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		removeOrphanBuilds()
		if buildDir, buildErr = os.MkdirTemp("", fmt.Sprintf("sluice-upfd-%d-", os.Getpid())); buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "upfd")
		out, err := exec.Command("go", "build", "-o", buildBin, "github.com/sluice-upf/sluice/cmd/upfd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build upfd: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// removeOrphanBuilds deletes the sluice-upfd-<pid>-* directories whose
// process is gone.
func removeOrphanBuilds() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "sluice-upfd-*-*"))
	for _, d := range dirs {
		parts := strings.Split(filepath.Base(d), "-")
		if len(parts) != 4 {
			continue
		}
		pid, err := strconv.Atoi(parts[2])
		if err != nil || unix.Kill(pid, 0) != unix.ESRCH {
			continue // not ours, or its process is alive
		}
		os.RemoveAll(d)
	}
}

// Log is a process's output so far, safe to read while it writes.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// StartUPFD runs upfd (BuildUPFD's) with config, a YAML file's text, in
// namespace ns until the test ends or stop is called: then it gets
// SIGTERM, by its PID (nsenter execs upfd: one process), and SIGKILL after
// StopGrace. An exit that is not clean on SIGTERM fails the test. Its
// output is log's, complete once stop has returned.
func StartUPFD(t testing.TB, ns, config string) (log *Log, stop func()) {
	t.Helper()
	p := StartUPFDProcess(t, ns, config)
	return p.Log, p.Stop
}

// UPFD is a running upfd, as StartUPFDProcess started it.
type UPFD struct {
	Log  *Log
	cmd  *exec.Cmd
	t    testing.TB
	once sync.Once
	// exited closes when the process has ended (and been reaped); err is
	// how, then.
	exited chan struct{}
	err    error
}

// StartUPFDProcess is StartUPFD, with a way to kill the process too.
func StartUPFDProcess(t testing.TB, ns, config string) *UPFD {
	t.Helper()
	bin := BuildUPFD(t)
	cfg := filepath.Join(t.TempDir(), "upfd.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &UPFD{Log: &Log{}, t: t, exited: make(chan struct{})}
	// nsenter, not ip netns exec: that one remounts /sys, which hides the
	// bpffs at /sys/fs/bpf where a pinned upfd keeps its maps.
	p.cmd = exec.Command("nsenter", "--net=/run/netns/"+ns, bin, "--config", cfg)
	p.cmd.Stdout, p.cmd.Stderr = p.Log, p.Log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.Stop)
	return p
}

// PID is the process's.
func (p *UPFD) PID() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM and waits for a clean exit, killing the process if
// it does not come within StopGrace; either fails the test. Once only,
// and nothing if the process ended already.
func (p *UPFD) Stop() {
	p.once.Do(func() {
		select {
		case <-p.exited:
			return
		default:
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
			if p.err != nil {
				p.t.Errorf("upfd did not exit cleanly on SIGTERM: %v\n%s", p.err, p.Log.String())
			}
		case <-time.After(StopGrace):
			p.cmd.Process.Kill()
			<-p.exited
			p.t.Errorf("upfd ignored SIGTERM\n%s", p.Log.String())
		}
	})
}

// Kill ends the process with SIGKILL, as a crash would, and waits for it.
func (p *UPFD) Kill() {
	p.once.Do(func() {
		p.cmd.Process.Kill()
		<-p.exited
	})
}

// Exited waits up to d for the process to end by itself (the OOM killer,
// a crash); false if it did not.
func (p *UPFD) Exited(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}
