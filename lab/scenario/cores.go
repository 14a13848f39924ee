package scenario

import (
	"fmt"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// Cores is how many cores a throughput or ndr step's generator sends from:
// one, or all of them (0).
//
// On one core the lab is a closed loop: a veth passes a frame on in the
// core that sends it, so the generator's frames cross the UPF's XDP and
// reach the sink in that core's softirq before the next batch is built,
// and flat out the generator runs exactly as fast as the whole path does.
// Its rate, over the time the core gave it, is the path's cost, which
// repeats from run to run. On all cores the workers contend for the
// veths' queues and for the cores with the UPF and the sink: what the
// whole machine does, with the noise of every process on it.
type Cores int

// OneCore is the closed loop; AllCores (the default) a worker on each core.
const (
	AllCores Cores = 0
	OneCore  Cores = 1
)

func (c Cores) String() string {
	if c == OneCore {
		return "1 core"
	}
	return "all cores"
}

func parseCores(s string) (Cores, error) {
	switch s {
	case "1":
		return OneCore, nil
	case "all":
		return AllCores, nil
	}
	return 0, fmt.Errorf("%s is not a number of cores; want 1 (generator, UPF and sink on one core: the closed loop) or all", yamlfile.Quote(s))
}

// coresField is the cores key of the steps that take it.
func (d *decoder) coresField(c *Cores) field {
	return field{"cores", value(d, c, "1 or all", parseCores)}
}

// coresText is what a step's setup says of its cores: nothing for the
// default.
func coresText(c Cores) string {
	if c == AllCores {
		return ""
	}
	return ", " + c.String()
}
