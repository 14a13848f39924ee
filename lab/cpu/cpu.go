// Package cpu measures the CPU a step costs: the time of a process tree
// (the UPF's processes, all their threads and children) and, per core, the
// busy and softirq time. XDP on veth runs in softirq, on the core that
// receives, so a UPF whose datapath is XDP shows its work there, not in its
// process. Both come from /proc, sampled when the step starts and when it
// ends:
//
//	s, err := cpu.Start(upfPID)
//	... the step ...
//	usage, err := s.Stop()
//
// Figures are in percent of one core: 150 is one core and a half. /proc
// counts in ticks of 10 ms, so a 5 s step resolves 0.2 %.
package cpu

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc's times. The kernel fixes it at 100 for user
// space whatever its own HZ (USER_HZ).
const userHZ = 100

// Sample is the state at a step's start.
type Sample struct {
	roots []int
	at    time.Time
	ticks uint64      // of the process tree
	cores []coreTicks // by position in /proc/stat
	proc  string      // the proc file system's mount, for tests
}

// Usage is what the tree and the cores used between Start and Stop.
type Usage struct {
	Elapsed time.Duration
	// Process is the tree's user and system time: every process under the
	// roots, all their threads, and the children they reaped meanwhile.
	// A child that its parent outside the tree reaps takes its time away.
	Process float64
	Cores   []Core // every online core
}

// Core is one core's use over the step, in percent of it.
type Core struct {
	CPU     int     // number, as in /proc/stat
	Busy    float64 // everything but idle and iowait
	Softirq float64 // softirq alone, part of Busy
}

// Softirq is the softirq time of the given cores together (of all cores
// when none is given), in percent of one core.
func (u Usage) Softirq(cores ...int) float64 {
	var sum float64
	for _, c := range u.Cores {
		if len(cores) == 0 || slices.Contains(cores, c.CPU) {
			sum += c.Softirq
		}
	}
	return sum
}

// ErrNoProcess means none of the PIDs given to Start exists.
var ErrNoProcess = errors.New("no such process")

// Start samples the tree under pids and every core. Without pids (a UPF
// that is all XDP, like the reference forwarder) only the cores count.
func Start(pids ...int) (*Sample, error) {
	return start("/proc", pids)
}

func start(proc string, pids []int) (*Sample, error) {
	s := &Sample{roots: pids, proc: proc}
	var err error
	if s.ticks, err = s.treeTicks(); err != nil {
		return nil, err
	}
	if s.cores, err = readCores(proc); err != nil {
		return nil, err
	}
	s.at = time.Now()
	return s, nil
}

// Stop samples again and returns the use since Start. The roots may have
// ended: then only what their tree left behind counts.
func (s *Sample) Stop() (Usage, error) {
	now := time.Now()
	ticks, err := s.treeTicks()
	if err != nil && !errors.Is(err, ErrNoProcess) {
		return Usage{}, err
	}
	cores, err := readCores(s.proc)
	if err != nil {
		return Usage{}, err
	}
	u := Usage{Elapsed: now.Sub(s.at)}
	if ticks > s.ticks && u.Elapsed > 0 {
		u.Process = 100 * float64(ticks-s.ticks) / userHZ / u.Elapsed.Seconds()
	}
	u.Cores = coreUsage(s.cores, cores)
	return u, nil
}

// treeTicks adds up the time of every process under the roots.
func (s *Sample) treeTicks() (uint64, error) {
	procs, err := readProcesses(s.proc)
	if err != nil {
		return 0, err
	}
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	var total uint64
	found := false
	seen := map[int]bool{}
	queue := append([]int(nil), s.roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		p, ok := procs[pid]
		if !ok || seen[pid] {
			continue
		}
		seen[pid], found = true, true
		total += p.ticks
		queue = append(queue, children[pid]...)
	}
	if !found && len(s.roots) > 0 {
		return 0, fmt.Errorf("cpu: pids %v: %w", s.roots, ErrNoProcess)
	}
	return total, nil
}

// process is what /proc/PID/stat says of one process.
type process struct {
	pid, ppid int
	ticks     uint64 // utime + stime + cutime + cstime
}

// readProcesses reads every process. One may end while it is read: then
// it is not there.
func readProcesses(proc string) (map[int]process, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	procs := map[int]process{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(proc, e.Name(), "stat"))
		if err != nil {
			continue
		}
		if p, err := parseStat(data); err == nil {
			p.pid = pid
			procs[pid] = p
		}
	}
	return procs, nil
}

// parseStat reads /proc/PID/stat (proc(5)). The command name, in
// parentheses, may hold spaces and parentheses itself: the fields start
// after the last ')'.
func parseStat(data []byte) (process, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return process{}, errors.New("cpu: stat without a command name")
	}
	// From field 3 (state) on: ppid is field 4, utime to cstime 14 to 17.
	fields := strings.Fields(string(data[end+1:]))
	if len(fields) < 15 {
		return process{}, fmt.Errorf("cpu: stat has %d fields after the name; want 15 or more", len(fields))
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return process{}, fmt.Errorf("cpu: stat ppid: %w", err)
	}
	var ticks uint64
	for _, f := range fields[11:15] {
		n, err := strconv.ParseInt(f, 10, 64) // cutime and cstime are signed
		if err != nil {
			return process{}, fmt.Errorf("cpu: stat times: %w", err)
		}
		ticks += uint64(max(n, 0))
	}
	return process{ppid: ppid, ticks: ticks}, nil
}

// coreTicks are one core's counters from /proc/stat.
type coreTicks struct {
	cpu                  int
	total, idle, softirq uint64
}

func readCores(proc string) ([]coreTicks, error) {
	data, err := os.ReadFile(filepath.Join(proc, "stat"))
	if err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	return parseCores(data)
}

// parseCores reads the "cpuN" lines of /proc/stat: user nice system idle
// iowait irq softirq steal guest guest_nice. Guest time is inside user and
// nice already, so it is not added again.
func parseCores(data []byte) ([]coreTicks, error) {
	var cores []coreTicks
	lines := bufio.NewScanner(bytes.NewReader(data))
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) < 8 || !strings.HasPrefix(fields[0], "cpu") || fields[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(fields[0][3:])
		if err != nil {
			continue
		}
		c := coreTicks{cpu: n}
		for i, f := range fields[1:min(len(fields), 9)] {
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("cpu: /proc/stat %s: %w", fields[0], err)
			}
			c.total += v
			switch i {
			case 3, 4: // idle, iowait
				c.idle += v
			case 6:
				c.softirq = v
			}
		}
		cores = append(cores, c)
	}
	if len(cores) == 0 {
		return nil, errors.New("cpu: /proc/stat lists no cores")
	}
	return cores, nil
}

// coreUsage compares two samples of the cores; a core that went offline
// or came online meanwhile is left out.
func coreUsage(before, after []coreTicks) []Core {
	var out []Core
	for _, a := range after {
		for _, b := range before {
			if b.cpu != a.cpu || a.total <= b.total {
				continue
			}
			total := float64(a.total - b.total)
			busy := float64((a.total - a.idle) - min(b.total-b.idle, a.total-a.idle))
			out = append(out, Core{
				CPU:     a.cpu,
				Busy:    100 * busy / total,
				Softirq: 100 * float64(a.softirq-min(b.softirq, a.softirq)) / total,
			})
		}
	}
	return out
}

// Combine is the use over several intervals, each weighing by how long it
// was: a step measured in rounds, between which others ran.
func Combine(us ...Usage) Usage {
	var out Usage
	cores := map[int]*Core{}
	var order []int
	for _, u := range us {
		out.Elapsed += u.Elapsed
	}
	if out.Elapsed <= 0 {
		return out
	}
	for _, u := range us {
		w := float64(u.Elapsed) / float64(out.Elapsed)
		out.Process += w * u.Process
		for _, c := range u.Cores {
			sum, ok := cores[c.CPU]
			if !ok {
				sum = &Core{CPU: c.CPU}
				cores[c.CPU] = sum
				order = append(order, c.CPU)
			}
			sum.Busy += w * c.Busy
			sum.Softirq += w * c.Softirq
		}
	}
	slices.Sort(order)
	for _, c := range order {
		out.Cores = append(out.Cores, *cores[c])
	}
	return out
}
