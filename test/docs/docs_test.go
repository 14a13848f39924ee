package docs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/testenv"
)

const root = "../.."

// TestMarkers: every Markdown file's blocks read, each marker names its
// reason and stands before an sh block; the blocks not run are listed.
func TestMarkers(t *testing.T) {
	names, err := docs(root)
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, name := range names {
		bs, err := blocks(filepath.Join(root, name), name)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, b := range bs {
			switch {
			case b.runs():
				runs++
			case b.skip != "":
				t.Logf("%s:%d: not run in CI: %s", b.file, b.line, b.skip)
			}
		}
	}
	if runs == 0 {
		t.Error("no block to run")
	}
}

// TestPrivilegedDocsRunAsPasted runs each file's sh blocks as a reader
// pastes them, in a world of the file's own (see the package comment).
func TestPrivilegedDocsRunAsPasted(t *testing.T) {
	testenv.RequirePrivileges(t)
	for _, tool := range []string{"unshare", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: run scripts/deps.sh", tool)
		}
	}
	repo, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	names, err := docs(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		bs, err := blocks(filepath.Join(repo, name), name)
		if err != nil {
			t.Fatal(err)
		}
		var run []block
		for _, b := range bs {
			if b.runs() {
				run = append(run, b)
			}
		}
		if len(run) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) { runBlocks(t, repo, run) })
	}
}

// isolate makes the private world the blocks run in, then runs them:
// bash -c isolate docs REPO DIR SCRIPT.
const isolate = `set -e
repo=$1 dir=$2 script=$3
readlink /proc/self/ns/mnt >"$dir/mntns"
mkdir -p /run/netns
mount -t tmpfs docs-netns /run/netns
mount -t bpf docs-bpf /sys/fs/bpf
mount -t tmpfs docs-overlay "$dir/overlay"
mkdir "$dir/overlay/upper" "$dir/overlay/work"
mount -t overlay docs-repo -o "lowerdir=$repo,upperdir=$dir/overlay/upper,workdir=$dir/overlay/work" "$repo"
cd "$repo"
rm -rf bin upflab-results sessions.json   # as in a clean clone
exec bash "$script"
`

// runBlocks runs the blocks of one file and fails the test at the first
// command that fails, naming its block.
func runBlocks(t *testing.T, repo string, bs []block) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "overlay"), 0o700); err != nil {
		t.Fatal(err)
	}
	sh := filepath.Join(dir, "blocks.sh")
	if err := os.WriteFile(sh, []byte(script(repo, bs)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "bash", "-c", isolate, "docs", repo, dir, sh)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The overlay's files are not the clone's: git must not look at them.
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	mnt := pinMountNamespace(cmd.Process.Pid, filepath.Join(dir, "mntns"))
	err := cmd.Wait()
	endAll(t, cmd.Process.Pid, mnt)
	t.Logf("%d blocks in %v", len(bs), time.Since(start).Round(time.Second))
	if err != nil {
		at := "before the first block"
		for _, b := range bs {
			if bytes.Contains(out.Bytes(), []byte(startLine(b)+"\n")) {
				at = b.file + ":" + strconv.Itoa(b.line)
			}
		}
		t.Errorf("the block at %s failed (%v); what the blocks printed:\n%s", at, err, tail(out.String(), 80))
	} else if testing.Verbose() {
		t.Logf("what the blocks printed:\n%s", out.String())
	}
}

// pinMountNamespace opens the blocks' mount namespace once the shell (pid,
// not yet waited for) has written its name to mntFile, so that the
// namespace outlives the shell: while it is open, no other namespace can
// take its inode number, and endAll kills only what is in it. Unpinned,
// the number of a namespace gone is soon another's (an ip -n of another
// test's), whose processes endAll would kill. nil: the shell was gone
// before, or never wrote it.
func pinMountNamespace(pid int, mntFile string) *os.File {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(mntFile); err == nil {
			f, err := os.Open(fmt.Sprintf("/proc/%d/ns/mnt", pid))
			if err != nil {
				return nil
			}
			return f
		}
	}
	return nil
}

// endAll kills what the blocks left running: the shell's process group,
// then any process still in the blocks' mount namespace (a UPF started
// in a group of its own), which only the shell's descendants can be in;
// mnt, pinned, is that namespace, and is closed.
func endAll(t *testing.T, pgid int, mnt *os.File) {
	syscall.Kill(-pgid, syscall.SIGKILL)
	if mnt == nil {
		return // it never got that far
	}
	defer mnt.Close()
	var pinned syscall.Stat_t
	if err := syscall.Fstat(int(mnt.Fd()), &pinned); err != nil {
		t.Errorf("the blocks' mount namespace: %v", err)
		return
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/ns/mnt")
	for _, p := range procs {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil && st.Dev == pinned.Dev && st.Ino == pinned.Ino {
			pid, _ := strconv.Atoi(strings.Split(p, "/")[2])
			t.Logf("killing pid %d, left running by the blocks", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
