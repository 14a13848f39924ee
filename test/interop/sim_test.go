package interop

import (
	"context"
	"fmt"
	"net"
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

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
)

// pfcpsimModule is the directory whose go.mod and go.sum pin pfcpsim: its
// two commands are the module's tools.
const pfcpsimModule = "testdata/pfcpsim"

var (
	simOnce sync.Once
	simDir  string // sluice-pfcpsim-<pid>-*, removed by TestMain
	simErr  error
)

// buildPfcpsim builds pfcpsim and pfcpctl once per test binary, from the
// module cache (scripts/deps.sh fills it), into a temporary directory,
// and returns it. Nothing is downloaded: GOPROXY=off, and every module
// is checked against the pinned go.sum.
func buildPfcpsim(t testing.TB) string {
	t.Helper()
	simOnce.Do(func() {
		removeOrphanBuilds()
		if simDir, simErr = os.MkdirTemp("", fmt.Sprintf("sluice-pfcpsim-%d-", os.Getpid())); simErr != nil {
			return
		}
		mod, err := filepath.Abs(pfcpsimModule)
		if err != nil {
			simErr = err
			return
		}
		cmd := exec.Command("go", "build", "-mod=readonly", "-o", simDir+"/", "tool")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			simErr = fmt.Errorf("build pfcpsim v1.4.4 from the module cache (run scripts/deps.sh first): %v\n%s", err, out)
		}
	})
	if simErr != nil {
		t.Fatal(simErr)
	}
	return simDir
}

// removeOrphanBuilds deletes the sluice-pfcpsim-<pid>-* directories whose
// process is gone.
func removeOrphanBuilds() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "sluice-pfcpsim-*-*"))
	for _, d := range dirs {
		parts := strings.Split(filepath.Base(d), "-")
		if len(parts) != 4 {
			continue
		}
		pid, err := strconv.Atoi(parts[2])
		if err != nil || unix.Kill(pid, 0) != unix.ESRCH {
			continue
		}
		os.RemoveAll(d)
	}
}

// grpcPort is where pfcpsim takes pfcpctl's calls, in the SMF namespace.
const grpcPort = "54321"

// sim is pfcpsim running in the SMF namespace, driven by pfcpctl, with
// upfd's reports held from it while it waits for a response.
type sim struct {
	ns   string
	dir  string
	log  *testenv.Log
	gate *reportGate
}

// startPfcpsim runs pfcpsim in ns, its PFCP address smf0's, until the
// test ends: then it gets SIGTERM by its PID, SIGKILL after a grace.
func startPfcpsim(t *testing.T, ns string) *sim {
	t.Helper()
	s := &sim{ns: ns, dir: buildPfcpsim(t), log: &testenv.Log{}, gate: gateReports(t, ns, "smf0")}
	cmd := exec.Command("nsenter", "--net=/run/netns/"+ns, filepath.Join(s.dir, "pfcpsim"), "--port", grpcPort, "--interface", "smf0")
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("pfcpsim ignored SIGTERM")
		}
		if t.Failed() {
			t.Logf("pfcpsim's log:\n%s", tail(s.log.String(), 60))
		}
	})
	// Ready when its gRPC port takes a connection.
	for deadline := time.Now().Add(10 * time.Second); ; {
		err := netns.Do(ns, func() error {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+grpcPort, time.Second)
			if err == nil {
				c.Close()
			}
			return err
		})
		if err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("pfcpsim exited: %v\n%s", err, s.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pfcpsim's gRPC port: %v\n%s", err, s.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// ctl runs pfcpctl with args against our pfcpsim, for at most limit, and
// returns its output and how long it took. pfcpctl exits 1 when pfcpsim
// answers an error. upfd's reports are held from pfcpsim meanwhile.
func (s *sim) ctl(limit time.Duration, args ...string) (string, time.Duration, error) {
	if err := s.gate.hold(); err != nil {
		return "", 0, err
	}
	defer s.gate.release()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	argv := append([]string{"--net=/run/netns/" + s.ns, filepath.Join(s.dir, "pfcpctl"), "--server", "127.0.0.1:" + grpcPort}, args...)
	cmd := exec.CommandContext(ctx, "nsenter", argv...) // killed by its PID at the limit
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if ctx.Err() != nil {
		err = fmt.Errorf("pfcpctl %s: no answer within %v", strings.Join(args, " "), limit)
	}
	return string(out), took, err
}

// must runs pfcpctl and fails the test if it fails.
func (s *sim) must(t *testing.T, limit time.Duration, args ...string) time.Duration {
	t.Helper()
	out, took, err := s.ctl(limit, args...)
	if err != nil {
		t.Fatalf("pfcpctl %s: %v\n%s\npfcpsim's log:\n%s", strings.Join(args, " "), err, out, tail(s.log.String(), 30))
	}
	return took
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[%d lines before]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
