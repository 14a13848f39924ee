package interop

import (
	"net"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"

	"github.com/sluice-upf/sluice/internal/netns"
)

// dropReports attaches to dev in ns an XDP program that drops every PFCP
// Session Report Request (IPv4 without options, UDP from port 8805,
// message type 56) and passes every other frame, until the returned
// function or the test's end detaches it.
//
// pfcpsim answers a report in its only receive loop, after a linear search
// of all its sessions; with its periodic URR (1 s) in each, upfd sends it
// as many reports a second as it has sessions. At thousands of sessions it
// falls behind, its socket overflows, and it loses the responses to its
// own requests, which it never sends again. Dropping the reports before
// they reach it keeps its requests and their responses alone on its
// socket; upfd sends each report pfcp.n1 times, then gives it up.
func dropReports(t *testing.T, ns, dev string) (detach func()) {
	t.Helper()
	const (
		xdpDrop, xdpPass = 1, 2
		ipProto          = 14 + 9  // Ethernet, then IPv4's protocol
		udpSport         = 14 + 20 // IPv4 without options, then UDP's source port
		pfcpType         = 14 + 20 + 8 + 1
	)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:    ebpf.XDP,
		License: "GPL",
		Instructions: asm.Instructions{
			asm.LoadMem(asm.R2, asm.R1, 0, asm.Word), // data
			asm.LoadMem(asm.R3, asm.R1, 4, asm.Word), // data_end
			asm.Mov.Reg(asm.R4, asm.R2),
			asm.Add.Imm(asm.R4, pfcpType+1),
			asm.JGT.Reg(asm.R4, asm.R3, "pass"),
			asm.LoadMem(asm.R5, asm.R2, 12, asm.Half),
			asm.JNE.Imm(asm.R5, 0x0008, "pass"), // 0x0800, IPv4, as a little-endian load reads it
			asm.LoadMem(asm.R5, asm.R2, 14, asm.Byte),
			asm.JNE.Imm(asm.R5, 0x45, "pass"),
			asm.LoadMem(asm.R5, asm.R2, ipProto, asm.Byte),
			asm.JNE.Imm(asm.R5, 17, "pass"),
			asm.LoadMem(asm.R5, asm.R2, udpSport, asm.Half),
			asm.JNE.Imm(asm.R5, 0x6522, "pass"), // 8805
			asm.LoadMem(asm.R5, asm.R2, pfcpType, asm.Byte),
			asm.JNE.Imm(asm.R5, msgReportReq, "pass"),
			asm.Mov.Imm(asm.R0, xdpDrop),
			asm.Return(),
			asm.Mov.Imm(asm.R0, xdpPass).WithSymbol("pass"),
			asm.Return(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var l link.Link
	err = netns.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		l, err = link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifc.Index})
		return err
	})
	if err != nil {
		prog.Close()
		t.Fatalf("attach the report filter to %s: %v", dev, err)
	}
	var done bool
	detach = func() {
		if !done {
			done = true
			l.Close()
			prog.Close()
		}
	}
	t.Cleanup(detach)
	return detach
}
