package interop

import (
	"net"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"

	"github.com/sluice-upf/sluice/internal/netns"
)

// reportGate keeps upfd's Session Report Requests from pfcpsim while one
// of pfcpsim's requests waits for its response: an XDP program on the
// SMF's device drops every PFCP Session Report Request (IPv4 without
// options, UDP from port 8805, message type 56) while the gate is held,
// and counts them; everything else passes.
//
// pfcpsim reads every datagram into one buffer, and the message it hands
// to the request waiting for a response still points into it: a report
// that comes right after a response overwrites the response before it is
// read (a Session Modification Response from upfd with cause 1 was read
// as "Invalid Cause from response"). Between requests the reports reach
// pfcpsim and it answers them.
type reportGate struct {
	m *ebpf.Map // key 0: held (1) or not; key 1: reports dropped
}

// gateReports attaches the gate to dev in ns, open, until the test ends.
func gateReports(t *testing.T, ns, dev string) *reportGate {
	t.Helper()
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	const (
		xdpDrop, xdpPass = 1, 2
		ipProto          = 14 + 9  // Ethernet, then IPv4's protocol
		udpSport         = 14 + 20 // IPv4 without options, then UDP's source port
		pfcpType         = 14 + 20 + 8 + 1
	)
	// lookup puts the address of element key of m in R0, or goes to pass.
	lookup := func(key int32) asm.Instructions {
		return asm.Instructions{
			asm.StoreImm(asm.R10, -4, int64(key), asm.Word),
			asm.Mov.Reg(asm.R2, asm.R10),
			asm.Add.Imm(asm.R2, -4),
			asm.LoadMapPtr(asm.R1, m.FD()),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "pass"),
		}
	}
	var ins asm.Instructions
	ins = append(ins, asm.Mov.Reg(asm.R6, asm.R1)) // the context, kept across calls
	ins = append(ins, lookup(0)...)
	ins = append(ins,
		asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
		asm.JEq.Imm(asm.R1, 0, "pass"),           // not held
		asm.LoadMem(asm.R2, asm.R6, 0, asm.Word), // data
		asm.LoadMem(asm.R3, asm.R6, 4, asm.Word), // data_end
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
	)
	ins = append(ins, lookup(1)...)
	ins = append(ins,
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.Word),
		asm.Mov.Imm(asm.R0, xdpDrop),
		asm.Return(),
		asm.Mov.Imm(asm.R0, xdpPass).WithSymbol("pass"),
		asm.Return(),
	)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL", Instructions: ins})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	err = netns.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		l, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifc.Index})
		if err == nil {
			t.Cleanup(func() { l.Close() })
		}
		return err
	})
	if err != nil {
		t.Fatalf("attach the report gate to %s: %v", dev, err)
	}
	return &reportGate{m: m}
}

// hold drops reports until release.
func (g *reportGate) hold() error { return g.m.Update(uint32(0), uint32(1), ebpf.UpdateAny) }

// release lets reports through again.
func (g *reportGate) release() error { return g.m.Update(uint32(0), uint32(0), ebpf.UpdateAny) }

// dropped is how many reports the gate has dropped.
func (g *reportGate) dropped() uint32 {
	var n uint32
	g.m.Lookup(uint32(1), &n)
	return n
}
