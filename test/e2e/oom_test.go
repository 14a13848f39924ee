package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// TestPrivilegedUPFDKilledByTheOOMKiller puts a pinned upfd in a memory
// cgroup that lets it grow a few MiB, and establishes sessions until the
// OOM killer ends it, while a session carries traffic both ways. A new
// upfd takes over: every session the SMF was told of is there, not a
// frame was lost, and the final usage is exact.
func TestPrivilegedUPFDKilledByTheOOMKiller(t *testing.T) {
	lab := testenv.NewLab(t)
	cfg := pinnedConfig(t, "oom", strings.Replace(config, "max_sessions: 1024", "max_sessions: 65536", 1))
	upfd := testenv.StartUPFDProcess(t, lab.UPF, cfg)
	s := newSMF(t, lab)
	s.associate(upfd.Log)
	up, teid := trafficSession(t, s, upfd.Log)
	limitMemory(t, upfd.PID(), 4<<20)
	const count, rate = 30_000, 5_000 // 6 s each way
	traffic := bothWays(t, lab, teid, count, rate)

	// Sessions, one at a time, until upfd is killed: each answered one is
	// one the SMF knows.
	accepted := 0
	for i := 0; !upfd.Exited(0); i++ {
		if i == 60_000 {
			t.Fatalf("upfd still alive after %d sessions within its memory limit", accepted)
		}
		r := s.tryAsk(establishment(s.next(), fmt.Sprintf("10.45.%d.%d", 1+i/250, 1+i%250), volumeURR(1)), 5*time.Second,
			func() bool { return upfd.Exited(0) })
		if r == nil {
			break
		}
		if c := cause(t, r.(*message.SessionEstablishmentResponse).Cause); c != 1 {
			t.Fatalf("session %d: cause %d", i, c)
		}
		accepted++
	}
	if !upfd.Exited(10 * time.Second) {
		t.Fatalf("upfd stopped answering after %d sessions, but did not die", accepted)
	}
	t.Logf("the OOM killer ended upfd after %d sessions", accepted)
	second := testenv.StartUPFDProcess(t, lab.UPF, cfg)
	waitFor(t, second.Log, "serving N4", 10*time.Second)
	line, _ := logLine(second.Log, "serving N4")
	// The one the SMF sent last may be there too, unanswered: it is sent
	// again below.
	if n := sessionsIn(line); n != accepted+1 && n != accepted+2 {
		t.Errorf("after the OOM kill, %d sessions; want the %d answered and the traffic's (and perhaps the last, unanswered)\n%s", n, accepted, second.Log)
	}
	upN, downN := traffic.arrived()
	if upN != count || downN != count {
		t.Errorf("frames lost across the OOM kill: uplink %d of %d, downlink %d of %d", upN, count, downN, count)
	}
	del := s.ask(message.NewSessionDeletionRequest(0, 0, up, s.next(), 0)).(*message.SessionDeletionResponse)
	if c := cause(t, del.Cause); c != 1 {
		t.Fatalf("deletion after the OOM kill: cause %d", c)
	}
	want := volume{ul: uint64(upN) * 128, dl: uint64(downN) * 128, ulPkts: uint64(upN), dlPkts: uint64(downN)}
	if got := usageIn(t, del.UsageReport, 1); got != want {
		t.Errorf("final usage after the OOM kill %+v, want %+v (what arrived)", got, want)
	}
}

// limitMemory moves pid into a memory cgroup of its own, below the test's,
// that lets it grow by margin: what it holds stays charged where it was
// (memory is not moved with a process), so the limit is on what it takes
// from now on. The cgroup goes at cleanup.
func limitMemory(t *testing.T, pid int, margin int64) {
	t.Helper()
	dir, limitFile := memoryCgroup(t)
	dir = filepath.Join(dir, fmt.Sprintf("sluice-oom-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("a memory cgroup: %v", err)
	}
	t.Cleanup(func() { os.Remove(dir) }) // once the process in it is gone
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(strconv.FormatInt(margin, 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("upfd (pid %d, %d MiB resident) may take %d MiB more", pid, residentBytes(t, pid)>>20, margin>>20)
}

// memoryCgroup is the test's own memory cgroup directory, and the file
// that limits one: cgroup v2's memory.max, or v1's memory.limit_in_bytes.
func memoryCgroup(t *testing.T) (dir, limitFile string) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		switch {
		case len(parts) != 3:
		case parts[1] == "memory":
			return filepath.Join("/sys/fs/cgroup/memory", parts[2]), "memory.limit_in_bytes"
		case parts[0] == "0" && fileExists("/sys/fs/cgroup/cgroup.controllers"):
			return filepath.Join("/sys/fs/cgroup", parts[2]), "memory.max"
		}
	}
	t.Skip("no memory cgroup")
	return "", ""
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// residentBytes is a process's resident memory.
func residentBytes(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(fields[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// sessionsIn reads sessions=N from a log line.
func sessionsIn(line string) int {
	_, after, _ := strings.Cut(line, "sessions=")
	n, _ := strconv.Atoi(strings.Fields(after + " ")[0])
	return n
}
