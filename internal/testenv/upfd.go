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
	bin := BuildUPFD(t)
	cfg := filepath.Join(t.TempDir(), "upfd.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	log = &Log{}
	// nsenter, not ip netns exec: that one remounts /sys, which hides the
	// bpffs at /sys/fs/bpf where a pinned upfd keeps its maps.
	cmd := exec.Command("nsenter", "--net=/run/netns/"+ns, bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { terminate(t, cmd, log) }) }
	t.Cleanup(stop)
	return log, stop
}

// terminate sends SIGTERM and waits for a clean exit, killing the process
// if it does not come within StopGrace.
func terminate(t testing.TB, cmd *exec.Cmd, log *Log) {
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("upfd did not exit cleanly on SIGTERM: %v\n%s", err, log.String())
		}
	case <-time.After(StopGrace):
		cmd.Process.Kill()
		<-done
		t.Errorf("upfd ignored SIGTERM\n%s", log.String())
	}
}
