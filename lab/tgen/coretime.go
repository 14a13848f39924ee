package tgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A worker's frames cross the lab's veths and reach the UPF and the sink in
// the softirq of the worker's core, which the kernel runs in the worker's
// own thread when a batch is sent, or else, when softirqs pile up, in that
// core's ksoftirqd. Their CPU time together is the time the core gave the
// run: Result.CoreTime. Unlike the run's wall time, it leaves out what the
// core spent on other processes meanwhile, which on a shared machine
// varies from one second to the next. (The scheduler's clock already
// leaves out the time the hypervisor took the core away.)

// threadTime is the CPU time of the calling thread.
func threadTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// softirqThreads are the ksoftirqd threads of cpus, by their PIDs; a CPU
// whose thread is not found has none.
func softirqThreads(cpus []int) []int {
	var pids []int
	for _, c := range cpus {
		if pid, ok := ksoftirqd()[c]; ok {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ksoftirqd finds every CPU's ksoftirqd thread, once: kernel threads that
// stay for the machine's life.
var ksoftirqd = sync.OnceValue(func() map[int]int {
	out := map[int]int{}
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, comm := range comms {
		b, err := os.ReadFile(comm)
		name, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ksoftirqd/")
		if err != nil || !ok {
			continue
		}
		cpu, err1 := strconv.Atoi(name)
		pid, err2 := strconv.Atoi(filepath.Base(filepath.Dir(comm)))
		if err1 == nil && err2 == nil {
			out[cpu] = pid
		}
	}
	return out
})

// threadsTime is the CPU time of the threads pids have had so far, from
// /proc/PID/schedstat (in nanoseconds, unlike /proc/PID/stat's ticks).
func threadsTime(pids []int) (time.Duration, error) {
	var sum time.Duration
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			return 0, err
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0, fmt.Errorf("/proc/%d/schedstat: empty", pid)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/schedstat: %w", pid, err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}
