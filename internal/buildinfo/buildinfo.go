// Package buildinfo says what a binary was built from.
package buildinfo

import "runtime/debug"

// Version is the module version and VCS revision the binary was built
// from, as Go records them: "v1.2.3 0123456789ab", "(devel) …+dirty".
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			v += " " + s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			v += "+dirty"
		}
	}
	return v
}
