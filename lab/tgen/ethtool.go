package tgen

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/netns"
)

// XmitErrors is how many frames redirected out of dev it could not pass
// on: a veth counts them in tx_queue_N_xdp_xmit_errors when its peer's
// ring is full or its peer has no XDP program.
func XmitErrors(ns, dev string) (uint64, error) {
	var n uint64
	err := netns.Do(ns, func() error {
		stats, err := ethtoolStats(dev)
		for name, v := range stats {
			if strings.HasSuffix(name, "_xdp_xmit_errors") {
				n += v
			}
		}
		return err
	})
	return n, err
}

// ethtoolStats reads a device's statistics as `ethtool -S` does.
func ethtoolStats(dev string) (map[string]uint64, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	info, err := unix.IoctlGetEthtoolDrvinfo(fd, dev)
	if err != nil {
		return nil, err
	}
	n := int(info.N_stats)
	const ethSSStats, strLen = 1, 32   // ETH_SS_STATS, ETH_GSTRING_LEN
	names := make([]byte, 12+n*strLen) // struct ethtool_gstrings
	binary.NativeEndian.PutUint32(names[0:], unix.ETHTOOL_GSTRINGS)
	binary.NativeEndian.PutUint32(names[4:], ethSSStats)
	binary.NativeEndian.PutUint32(names[8:], uint32(n))
	if err := ethtool(fd, dev, names); err != nil {
		return nil, err
	}
	vals := make([]byte, 8+n*8) // struct ethtool_stats
	binary.NativeEndian.PutUint32(vals[0:], unix.ETHTOOL_GSTATS)
	binary.NativeEndian.PutUint32(vals[4:], uint32(n))
	if err := ethtool(fd, dev, vals); err != nil {
		return nil, err
	}
	stats := make(map[string]uint64, n)
	for i := range n {
		name := names[12+i*strLen : 12+(i+1)*strLen]
		name, _, _ = bytes.Cut(name, []byte{0})
		stats[string(name)] = binary.NativeEndian.Uint64(vals[8+i*8:])
	}
	return stats, nil
}

// ethtool is the SIOCETHTOOL ioctl with data as the command's buffer.
func ethtool(fd int, dev string, data []byte) error {
	var ifr struct {
		name [unix.IFNAMSIZ]byte
		data unsafe.Pointer
		_    [24 - unsafe.Sizeof(uintptr(0))]byte
	}
	copy(ifr.name[:], dev)
	ifr.data = unsafe.Pointer(&data[0])
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	if e != 0 {
		return e
	}
	return nil
}
