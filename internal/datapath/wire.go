package datapath

import (
	"encoding/binary"
	"net/netip"
)

// The datapath keeps addresses and TEIDs as the bytes on the wire; these
// turn them into the native-endian words the map encoder writes.

func familyOf(a netip.Addr) uint8 {
	switch {
	case a.Is4():
		return 4
	case a.Is6():
		return 6
	}
	return 0
}

func addrWords(a netip.Addr) [4]uint32 {
	var w [4]uint32
	if a.Is4() {
		b := a.As4()
		w[0] = binary.NativeEndian.Uint32(b[:])
		return w
	}
	if a.Is6() {
		b := a.As16()
		for i := range w {
			w[i] = binary.NativeEndian.Uint32(b[4*i:])
		}
	}
	return w
}

func wordsAddr(w [4]uint32, family uint8) netip.Addr {
	var b [16]byte
	for i := range w {
		binary.NativeEndian.PutUint32(b[4*i:], w[i])
	}
	if family == 4 {
		return netip.AddrFrom4([4]byte(b[:4]))
	}
	return netip.AddrFrom16(b)
}

// beWord is a 32-bit value in network byte order as a native word.
func beWord(v uint32) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return binary.NativeEndian.Uint32(b[:])
}

func wordBE(w uint32) uint32 {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], w)
	return binary.BigEndian.Uint32(b[:])
}
