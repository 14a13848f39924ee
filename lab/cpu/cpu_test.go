package cpu

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The test binary plays the processes it measures, by role.
const roleEnv = "SLUICE_CPU_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "parent":
		parent()
	case "spinner":
		spin()
	default:
		os.Exit(m.Run())
	}
}

// parent starts a spinning child, says its PID and then waits, idle, until
// it is killed: any time its tree uses is the child's.
func parent() {
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), roleEnv+"=spinner")
	child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := child.Start(); err != nil {
		os.Exit(1)
	}
	os.Stdout.WriteString(strconv.Itoa(child.Process.Pid) + "\n")
	child.Wait()
	os.Exit(0)
}

func spin() {
	for n := 0; ; n++ {
		_ = n * n
	}
}

// startTree starts a parent and its spinning child, and ends both when the
// test does: the parent by its PID (ours to reap), the child by a pidfd.
func startTree(t *testing.T) (parentPID, childPID int, killChild func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=parent")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read the child's PID: %v", err)
	}
	childPID, err = strconv.Atoi(line[:len(line)-1])
	if err != nil {
		t.Fatal(err)
	}
	// The child is the parent's to reap, not ours: once reaped (or, its
	// parent gone, by init), its PID may be another process's. A pidfd,
	// opened while it spins, signals only the child.
	child, err := unix.PidfdOpen(childPID, 0)
	if err != nil {
		t.Fatal(err)
	}
	killChild = func() { unix.PidfdSendSignal(child, unix.SIGKILL, nil, 0) }
	t.Cleanup(func() {
		killChild()
		unix.Close(child)
	})
	return cmd.Process.Pid, childPID, killChild
}

func TestProcessTreeOfABusyChild(t *testing.T) {
	parentPID, childPID, _ := startTree(t)
	s, err := Start(parentPID)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	u, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	// The parent is idle: what the tree used is its child's spinning, up
	// to one core. Other tests may share the cores, hence the low bound.
	if u.Process < 20 || u.Process > 110 {
		t.Errorf("process tree used %.1f%% of a core; want the spinning child's, 20%% to 110%%", u.Process)
	}
	if len(u.Cores) != runtime.NumCPU() {
		t.Errorf("%d cores measured; want %d", len(u.Cores), runtime.NumCPU())
	}
	var busy float64
	for _, c := range u.Cores {
		if c.Busy < 0 || c.Busy > 100 || c.Softirq < 0 || c.Softirq > c.Busy+0.01 {
			t.Errorf("core %d: busy %.1f%%, softirq %.1f%%: out of bounds", c.CPU, c.Busy, c.Softirq)
		}
		busy += c.Busy
	}
	if busy < u.Process*0.8 {
		t.Errorf("the cores were busy %.1f%% in all, less than the %.1f%% the tree used", busy, u.Process)
	}

	// The child alone, without its idle parent, is measured the same: its
	// spinning shows, however little of the shared cores it got (13.8 %
	// while the rest of the suite ran).
	s, err = Start(childPID)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if u, err = s.Stop(); err != nil || u.Process < 1 {
		t.Errorf("the child alone: %.1f%%, %v; want its spinning, 1%% or more", u.Process, err)
	}
}

func TestStopAfterTheProcessEnded(t *testing.T) {
	parentPID, _, killChild := startTree(t)
	s, err := Start(parentPID)
	if err != nil {
		t.Fatal(err)
	}
	killChild()
	syscall.Kill(parentPID, syscall.SIGKILL) // ours: not reaped until the cleanup's Wait
	time.Sleep(100 * time.Millisecond)
	if _, err := s.Stop(); err != nil {
		t.Errorf("Stop after the tree ended: %v; want the cores' use and no error", err)
	}
}

func TestStartWithoutProcess(t *testing.T) {
	// PIDs never reach 2^22 + 1 (PID_MAX_LIMIT is 2^22).
	if _, err := Start(1<<22 + 1); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Start(no such pid) = %v; want ErrNoProcess", err)
	}
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       process
		fails      bool
	}{{
		name: "plain name",
		stat: "42 (upfd) S 1 42 42 0 -1 4194560 100 0 0 0 250 75 3 2 20 0 6 0 100 0 0",
		want: process{ppid: 1, ticks: 250 + 75 + 3 + 2},
	}, {
		name: "name with spaces and parentheses",
		stat: "43 (a) b (c) R 42 43 43 0 -1 0 0 0 0 0 10 20 0 0 20 0 1 0 100 0 0",
		want: process{ppid: 42, ticks: 30},
	}, {
		name: "negative child times count as none",
		stat: "44 (x) S 1 1 1 0 -1 0 0 0 0 0 5 5 -1 -1 20 0 1 0 100 0 0",
		want: process{ppid: 1, ticks: 10},
	}, {
		name:  "cut short",
		stat:  "45 (x) S 1 1 1",
		fails: true,
	}, {
		name:  "no name",
		stat:  "46 x S 1",
		fails: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat([]byte(tc.stat))
			if tc.fails != (err != nil) || got != tc.want {
				t.Errorf("got %+v, %v; want %+v, failure %v", got, err, tc.want, tc.fails)
			}
		})
	}
}

func TestCoreUsage(t *testing.T) {
	before, err := parseCores([]byte("cpu  10 0 10 100 0 0 0 0 0 0\n" +
		"cpu0 100 0 100 1000 10 0 50 0 0 0\n" +
		"cpu1 100 0 100 1000 10 0 0 0 0 0\nintr 1 2 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	// 100 ticks later: cpu0 spent 30 in softirq and 20 in system time,
	// cpu1 was idle; cpu2 came online and is left out.
	after, err := parseCores([]byte("cpu  10 0 10 100 0 0 0 0 0 0\n" +
		"cpu0 100 0 120 1040 20 0 80 0 0 0\n" +
		"cpu1 100 0 100 1100 10 0 0 0 0 0\n" +
		"cpu2 1 0 1 1 0 0 0 0 0 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := coreUsage(before, after)
	want := []Core{{CPU: 0, Busy: 50, Softirq: 30}, {CPU: 1, Busy: 0, Softirq: 0}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %+v; want %+v", got, want)
	}
	u := Usage{Cores: got}
	if u.Softirq() != 30 || u.Softirq(1) != 0 || u.Softirq(0, 1) != 30 {
		t.Errorf("Softirq() = %v, (1) = %v, (0, 1) = %v; want 30, 0, 30", u.Softirq(), u.Softirq(1), u.Softirq(0, 1))
	}
}

// Rounds of 1 s and 3 s: the second weighs three times the first; a core
// seen in one round only counts for that round's share.
func TestCombine(t *testing.T) {
	got := Combine(
		Usage{Elapsed: time.Second, Process: 40, Cores: []Core{{CPU: 1, Busy: 80, Softirq: 40}}},
		Usage{Elapsed: 3 * time.Second, Process: 8, Cores: []Core{{CPU: 0, Busy: 20, Softirq: 0}, {CPU: 1, Busy: 40, Softirq: 20}}},
	)
	want := Usage{Elapsed: 4 * time.Second, Process: 16, Cores: []Core{{CPU: 0, Busy: 15, Softirq: 0}, {CPU: 1, Busy: 50, Softirq: 25}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Combine: %+v, want %+v", got, want)
	}
	if got := Combine(); !reflect.DeepEqual(got, Usage{}) {
		t.Errorf("Combine of nothing: %+v", got)
	}
}
