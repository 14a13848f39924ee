package topo

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// IP runs iproute2's ip and returns what it printed. An error carries the
// command line, what ip said and, where it is clear, what to do.
func IP(args ...string) ([]byte, error) {
	out, err := exec.Command("ip", args...).Output()
	if err == nil {
		return out, nil
	}
	said := ""
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		said = strings.TrimSpace(string(exit.Stderr))
	}
	hint := ""
	switch {
	case errors.Is(err, exec.ErrNotFound):
		hint = " (install iproute2)"
	case strings.Contains(said, "Operation not permitted"), strings.Contains(said, "Permission denied"):
		hint = " (the lab needs root)"
	case strings.Contains(said, `exec of "ethtool" failed`):
		hint = " (install ethtool)"
	}
	return nil, fmt.Errorf("ip %s: %v: %s%s", strings.Join(args, " "), err, said, hint)
}

// ipJSON runs ip with -j and decodes what it printed into v.
func ipJSON(v any, args ...string) error {
	out, err := IP(append([]string{"-j"}, args...)...)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(out))) == 0 {
		return nil // nothing to list
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("ip -j %s: unexpected output: %w", strings.Join(args, " "), err)
	}
	return nil
}

// IPAll runs each command in turn, stopping at the first that fails.
func IPAll(cmds [][]string) error {
	for _, c := range cmds {
		if _, err := IP(c...); err != nil {
			return err
		}
	}
	return nil
}
