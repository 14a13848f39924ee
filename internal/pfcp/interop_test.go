package pfcp

// Interop: our N4 against an encoder and decoders that share no code with
// go-pfcp. An SMF made of scapy's PFCP layer (testdata/scapy_n4.py) must
// get its sessions, and read every answer; Wireshark's dissector (tshark)
// must read every response we send without a malformed packet or an
// expert warning. scripts/deps.sh installs both: a missing one fails the
// test rather than skipping it.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/session"
)

// knownIssues are interop failures of our server that are understood and
// not fixed yet, by check name ("scapy: <step>", "n4: <response>",
// "tshark: <response>"; free5gc_test.go adds its "free5gc: <response>"). A
// listed check that fails is logged, not failed; one that passes fails the
// test, so that the entry goes once the bug is fixed.
var knownIssues = map[string]string{}

// interopCheck reports the problems a check found, minding knownIssues.
func interopCheck(t *testing.T, name string, problems []string) {
	t.Helper()
	why, known := knownIssues[name]
	switch {
	case len(problems) > 0 && known:
		t.Logf("%s: known issue (%s): %s", name, why, strings.Join(problems, "; "))
	case len(problems) > 0:
		t.Errorf("%s: %s", name, strings.Join(problems, "; "))
	case known:
		t.Errorf("%s passes now: remove it from knownIssues", name)
	}
}

// scapyStep is what testdata/scapy_n4.py read, with scapy, of one response.
type scapyStep struct {
	Step      string  `json:"step"`
	Type      uint8   `json:"type"`
	SEID      *uint64 `json:"seid"`
	Cause     uint8   `json:"cause"`
	Offending uint16  `json:"offending"`
	UPSEID    uint64  `json:"up_seid"`
	Created   []struct {
		PDR    uint16 `json:"pdr"`
		TEID   uint32 `json:"teid"`
		IPv4   string `json:"ipv4"`
		UEIPv4 string `json:"ue_ipv4"`
	} `json:"created"`
	Features     map[string]int `json:"features"`
	UsageReports []struct {
		URR      uint32         `json:"urr"`
		Triggers []string       `json:"triggers"`
		Volume   map[string]int `json:"volume"`
	} `json:"usage_reports"`
	Undecoded []string `json:"undecoded"`
	Rebuilt   bool     `json:"rebuilt"`
	Request   string   `json:"request"`
	Response  string   `json:"response"`
}

// scapyCheck is one expectation on a step; it returns what is wrong.
type scapyCheck func(scapyStep) []string

// runScapy runs the scapy SMF against the server and returns its steps.
func runScapy(t *testing.T, upf *net.UDPAddr) []scapyStep {
	t.Helper()
	// scripts/deps.sh installs scapy, at the version the script's patches
	// fit, in the repository's .venv, whatever the system's python3 has.
	python := "../../.venv/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Fatal("no .venv with scapy in the repository: run scripts/deps.sh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "testdata/scapy_n4.py", upf.IP.String(), strconv.Itoa(upf.Port))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if strings.Contains(stderr.String(), "No module named 'scapy'") {
		t.Fatal("scapy is missing: run scripts/deps.sh")
	}
	if err != nil {
		t.Fatalf("scapy SMF: %v\n%s", err, stderr.Bytes())
	}
	var steps []scapyStep
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var s scapyStep
		if err := json.Unmarshal(line, &s); err != nil {
			t.Fatalf("scapy SMF printed %q: %v", line, err)
		}
		steps = append(steps, s)
	}
	return steps
}

func TestPrivilegedInteropScapy(t *testing.T) {
	n := newN4(t)
	steps := map[string]scapyStep{}
	var frames []pcapFrame
	for _, s := range runScapy(t, n.upf) {
		steps[s.Step] = s
		b, err := hex.DecodeString(s.Response)
		if err != nil {
			t.Fatalf("%s: response %q: %v", s.Step, s.Response, err)
		}
		frames = append(frames, pcapFrame{name: "scapy: " + s.Step, b: b})
	}
	seid := func(want uint64) scapyCheck {
		return func(s scapyStep) []string {
			if s.SEID == nil || *s.SEID != want {
				return []string{fmt.Sprintf("header SEID %v, want the SMF's %#x", s.SEID, want)}
			}
			return nil
		}
	}
	upSEID := func(s scapyStep) []string {
		if s.UPSEID == 0 {
			return []string{"no UP F-SEID"}
		}
		return nil
	}
	uplinkTEID := func(s scapyStep) []string {
		for _, c := range s.Created {
			if c.PDR == 1 {
				if c.TEID == 0 || c.IPv4 != n3.String() {
					return []string{fmt.Sprintf("created F-TEID %#x at %q, want one at %v", c.TEID, c.IPv4, n3)}
				}
				return nil
			}
		}
		return []string{fmt.Sprintf("created PDRs %+v, want PDR 1 with its F-TEID", s.Created)}
	}
	chosenUE := func(s scapyStep) []string {
		for _, c := range s.Created {
			if a, err := netip.ParseAddr(c.UEIPv4); err == nil && c.PDR == 2 {
				if !netip.MustParsePrefix("10.45.0.0/16").Contains(a) {
					return []string{fmt.Sprintf("chosen UE address %v is not in the pool", a)}
				}
				return nil
			}
		}
		return []string{fmt.Sprintf("created PDRs %+v, want PDR 2 with the UE address", s.Created)}
	}
	for _, c := range []struct {
		step      string
		typ       uint8
		cause     uint8
		offending uint16
		checks    []scapyCheck
	}{
		{"association setup", message.MsgTypeAssociationSetupResponse, session.CauseAccepted, 0,
			[]scapyCheck{func(s scapyStep) []string {
				want := map[string]int{"FTUP": 1, "EMPU": 1, "UEIP": 1, "MNOP": 1, "VTIME": 1}
				if !maps.Equal(s.Features, want) {
					return []string{fmt.Sprintf("UP function features %v, want %v", s.Features, want)}
				}
				return nil
			}}},
		{"heartbeat", message.MsgTypeHeartbeatResponse, 0, 0, nil},
		{"establishment", message.MsgTypeSessionEstablishmentResponse, session.CauseAccepted, 0,
			[]scapyCheck{seid(0x1001), upSEID, uplinkTEID}},
		{"establishment choosing the UE address", message.MsgTypeSessionEstablishmentResponse, session.CauseAccepted, 0,
			[]scapyCheck{seid(0x1002), upSEID, uplinkTEID, chosenUE}},
		{"establishment with a PDR naming a FAR that is not there", message.MsgTypeSessionEstablishmentResponse,
			session.CauseRuleFailure, ie.FARID, []scapyCheck{seid(0x1003)}},
		{"modification", message.MsgTypeSessionModificationResponse, session.CauseAccepted, 0,
			[]scapyCheck{seid(0x1001)}},
		{"deletion", message.MsgTypeSessionDeletionResponse, session.CauseAccepted, 0,
			[]scapyCheck{seid(0x1001), func(s scapyStep) []string {
				for _, u := range s.UsageReports {
					if u.URR == 1 && slices.Contains(u.Triggers, "TERMR") && u.Volume["TOVOL"] == 1 {
						return nil
					}
				}
				return []string{fmt.Sprintf("usage reports %+v, want URR 1's final one (TERMR) with its volume", s.UsageReports)}
			}}},
	} {
		s, ok := steps[c.step]
		if !ok {
			t.Errorf("scapy SMF did not report step %q", c.step)
			continue
		}
		var problems []string
		if s.Type != c.typ || s.Cause != c.cause || s.Offending != c.offending {
			problems = append(problems, fmt.Sprintf("message type %d cause %d offending IE %d, want %d, %d and %d",
				s.Type, s.Cause, s.Offending, c.typ, c.cause, c.offending))
		}
		for _, u := range s.Undecoded {
			problems = append(problems, "scapy could not decode: "+u)
		}
		if !s.Rebuilt {
			problems = append(problems, "scapy does not rebuild the response it decoded octet for octet")
		}
		for _, check := range c.checks {
			problems = append(problems, check(s)...)
		}
		if len(problems) > 0 {
			t.Logf("scapy: %s: request %s\nresponse %s", c.step, s.Request, s.Response)
		}
		interopCheck(t, "scapy: "+c.step, problems)
	}
	tsharkCheck(t, frames)
	free5gcCheck(t, frames)
}

func TestPrivilegedInteropTshark(t *testing.T) {
	n := newN4(t)
	send := func(m message.Message) []byte { return n.raw(encode(t, m)) }
	recovery := ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0))
	var up uint64 // the accepted session's SEID
	var frames []pcapFrame
	// Every response type, accepted and refused, in an order that gets
	// each outcome. Add a line to check another message.
	for _, x := range []struct {
		name  string
		typ   uint8
		cause uint8
		ask   func() []byte
	}{
		{"heartbeat response", message.MsgTypeHeartbeatResponse, 0, func() []byte {
			return send(message.NewHeartbeatRequest(n.next(), recovery, nil))
		}},
		{"version not supported response", message.MsgTypeVersionNotSupportedResponse, 0, func() []byte {
			b := encode(t, message.NewHeartbeatRequest(n.next(), recovery, nil))
			b[0] = b[0]&0x1f | 2<<5
			return n.raw(b)
		}},
		{"association setup response, refused: no recovery time stamp",
			message.MsgTypeAssociationSetupResponse, session.CauseMandatoryIEMissing, func() []byte {
				return send(message.NewAssociationSetupRequest(n.next(), smfNode))
			}},
		{"association setup response, refused: an IE runs past the end",
			message.MsgTypeAssociationSetupResponse, session.CauseInvalidLength, func() []byte {
				return n.raw(undecodable(t, message.NewAssociationSetupRequest(n.next(), smfNode, recovery)))
			}},
		{"association update response, refused: no association",
			message.MsgTypeAssociationUpdateResponse, session.CauseNoAssociation, func() []byte {
				return send(message.NewAssociationUpdateRequest(n.next(), smfNode))
			}},
		{"association release response, refused: no association",
			message.MsgTypeAssociationReleaseResponse, session.CauseNoAssociation, func() []byte {
				return send(message.NewAssociationReleaseRequest(n.next(), smfNode))
			}},
		{"session establishment response, refused: no association",
			message.MsgTypeSessionEstablishmentResponse, session.CauseNoAssociation, func() []byte {
				return send(establishment(n.next(), 0xabc))
			}},
		{"association setup response", message.MsgTypeAssociationSetupResponse, session.CauseAccepted, func() []byte {
			return send(message.NewAssociationSetupRequest(n.next(), smfNode, recovery))
		}},
		{"association update response", message.MsgTypeAssociationUpdateResponse, session.CauseAccepted, func() []byte {
			return send(message.NewAssociationUpdateRequest(n.next(), smfNode))
		}},
		{"association update response, refused: an IE runs past the end",
			message.MsgTypeAssociationUpdateResponse, session.CauseInvalidLength, func() []byte {
				return n.raw(undecodable(t, message.NewAssociationUpdateRequest(n.next(), smfNode)))
			}},
		{"association release response, refused: an IE runs past the end",
			message.MsgTypeAssociationReleaseResponse, session.CauseInvalidLength, func() []byte {
				return n.raw(undecodable(t, message.NewAssociationReleaseRequest(n.next(), smfNode)))
			}},
		{"session establishment response",
			message.MsgTypeSessionEstablishmentResponse, session.CauseAccepted, func() []byte {
				b := send(establishment(n.next(), 0xabc))
				up = upSEIDIn(t, b)
				return b
			}},
		{"session establishment response, UE address chosen",
			message.MsgTypeSessionEstablishmentResponse, session.CauseAccepted, func() []byte {
				m := establishment(n.next(), 0xdef)
				m.CreatePDR = []*ie.IE{
					ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
						ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0d, 0, nil, nil, 5),
							ie.NewNetworkInstance("internet")),
						ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1), ie.NewQERID(1), ie.NewURRID(1)),
					ie.NewCreatePDR(ie.NewPDRID(2), ie.NewPrecedence(255),
						ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewNetworkInstance("internet"),
							ie.NewUEIPAddress(0x16, "", "", 0, 0)), // CHV4, SD, V4
						ie.NewFARID(2), ie.NewQERID(1), ie.NewURRID(1)),
				}
				return send(m)
			}},
		{"session establishment response, refused: PDR naming a FAR that is not there",
			message.MsgTypeSessionEstablishmentResponse, session.CauseRuleFailure, func() []byte {
				return send(establishment(n.next(), 0x123, ie.NewCreatePDR(ie.NewPDRID(3), ie.NewPrecedence(10),
					ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x06, "10.45.0.2", "", 0, 0)), ie.NewFARID(9))))
			}},
		{"session establishment response, refused: an IE runs past the end",
			message.MsgTypeSessionEstablishmentResponse, session.CauseInvalidLength, func() []byte {
				return n.raw(undecodable(t, establishment(n.next(), 0x124)))
			}},
		{"session modification response",
			message.MsgTypeSessionModificationResponse, session.CauseAccepted, func() []byte {
				return send(message.NewSessionModificationRequest(0, 0, up, n.next(), 0,
					ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
						ie.NewUpdateForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
							ie.NewOuterHeaderCreation(0x0100, 0x200, "198.18.3.1", "", 0, 0, 0)))))
			}},
		{"session modification response, Created PDR",
			message.MsgTypeSessionModificationResponse, session.CauseAccepted, func() []byte {
				return send(message.NewSessionModificationRequest(0, 0, up, n.next(), 0,
					ie.NewCreatePDR(ie.NewPDRID(3), ie.NewPrecedence(100),
						ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x05, 0, nil, nil, 0),
							ie.NewNetworkInstance("internet")),
						ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1))))
			}},
		{"session modification response, refused: update of a FAR that is not there",
			message.MsgTypeSessionModificationResponse, session.CauseRuleFailure, func() []byte {
				return send(message.NewSessionModificationRequest(0, 0, up, n.next(), 0,
					ie.NewUpdateFAR(ie.NewFARID(7), ie.NewApplyAction(0x01))))
			}},
		{"session modification response, refused: an IE runs past the end",
			message.MsgTypeSessionModificationResponse, session.CauseInvalidLength, func() []byte {
				return n.raw(undecodable(t, message.NewSessionModificationRequest(0, 0, up, n.next(), 0,
					ie.NewRemovePDR(ie.NewPDRID(3)))))
			}},
		{"session modification response, refused: no session",
			message.MsgTypeSessionModificationResponse, session.CauseNoSession, func() []byte {
				return send(message.NewSessionModificationRequest(0, 0, 0x999, n.next(), 0, ie.NewRemovePDR(ie.NewPDRID(1))))
			}},
		{"session deletion response", message.MsgTypeSessionDeletionResponse, session.CauseAccepted, func() []byte {
			return send(message.NewSessionDeletionRequest(0, 0, up, n.next(), 0))
		}},
		{"session deletion response, refused: no session",
			message.MsgTypeSessionDeletionResponse, session.CauseNoSession, func() []byte {
				return send(message.NewSessionDeletionRequest(0, 0, up, n.next(), 0))
			}},
		{"session deletion response, refused: an IE runs past the end",
			message.MsgTypeSessionDeletionResponse, session.CauseInvalidLength, func() []byte {
				return n.raw(undecodable(t, message.NewSessionDeletionRequest(0, 0, up, n.next(), 0)))
			}},
		{"association release response",
			message.MsgTypeAssociationReleaseResponse, session.CauseAccepted, func() []byte {
				return send(message.NewAssociationReleaseRequest(n.next(), smfNode))
			}},
	} {
		b := x.ask()
		// go-pfcp checks that the line gets the answer it names.
		var problems []string
		if c, err := causeOfResponse(b); err != nil {
			problems = append(problems, fmt.Sprintf("go-pfcp cannot decode it: %v", err))
		} else if b[1] != x.typ || c != x.cause {
			problems = append(problems, fmt.Sprintf("message type %d cause %d, want %d and %d", b[1], c, x.typ, x.cause))
		}
		interopCheck(t, "n4: "+x.name, problems)
		frames = append(frames, pcapFrame{name: x.name, b: b})
	}
	tsharkCheck(t, frames)
	free5gcCheck(t, frames)
}

// undecodable is m with an IE at the end that has 2 of the 8 octets its
// length claims: the header decodes, the message does not. (With none of
// them, go-pfcp takes the IE as empty and the message decodes.)
func undecodable(t *testing.T, m message.Message) []byte {
	b := append(encode(t, m), 0x00, byte(ie.RecoveryTimeStamp), 0x00, 0x08, 0xe8, 0x00)
	binary.BigEndian.PutUint16(b[2:4], uint16(len(b)-4))
	return b
}

// causeOfResponse is the Cause IE of a response, 0 if it has none.
func causeOfResponse(b []byte) (uint8, error) {
	h, err := message.ParseHeader(b)
	if err != nil {
		return 0, err
	}
	if _, err := message.Parse(b); err != nil {
		return 0, err
	}
	ies, err := ie.ParseMultiIEs(h.Payload)
	if err != nil {
		return 0, err
	}
	for _, i := range ies {
		if i.Type == ie.Cause {
			return i.Cause()
		}
	}
	return 0, nil
}

// upSEIDIn is the UP F-SEID of an accepted establishment.
func upSEIDIn(t *testing.T, b []byte) uint64 {
	t.Helper()
	m, err := message.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := m.(*message.SessionEstablishmentResponse)
	if !ok || r.UPFSEID == nil {
		t.Fatalf("want a session establishment response with an F-SEID, got %v", m)
	}
	f, err := r.UPFSEID.FSEID()
	if err != nil {
		t.Fatal(err)
	}
	return f.SEID
}

// pcapFrame is one PFCP message of ours for tshark to read, named for the
// report. Requests of ours (Session Report, Node Report) go in the same way.
type pcapFrame struct {
	name string
	b    []byte
}

// writePcap puts each frame in an Ethernet/IPv4/UDP packet from our N4
// address to an SMF's, port 8805 both ways, where tshark looks for PFCP,
// in a classic pcap file (pcapgo would need a go.sum entry we lack).
func writePcap(t *testing.T, path string, frames []pcapFrame) {
	t.Helper()
	var out bytes.Buffer
	le := binary.LittleEndian
	out.Write(le.AppendUint32(nil, 0xa1b2c3d4)) // microsecond timestamps
	out.Write(le.AppendUint16(nil, 2))
	out.Write(le.AppendUint16(nil, 4))
	out.Write(make([]byte, 8)) // time zone, accuracy
	out.Write(le.AppendUint32(nil, 65535))
	out.Write(le.AppendUint32(nil, uint32(layers.LinkTypeEthernet)))
	for i, fr := range frames {
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 4, 2}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 4, 1},
			EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP,
			SrcIP: net.IPv4(198, 18, 4, 2), DstIP: net.IPv4(198, 18, 4, 1)}
		udp := &layers.UDP{SrcPort: 8805, DstPort: 8805}
		udp.SetNetworkLayerForChecksum(ip)
		buf := gopacket.NewSerializeBuffer()
		opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
		if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, gopacket.Payload(fr.b)); err != nil {
			t.Fatalf("%s: %v", fr.name, err)
		}
		p := buf.Bytes()
		for _, v := range []uint32{1_700_000_000, uint32(i * 1000), uint32(len(p)), uint32(len(p))} {
			out.Write(le.AppendUint32(nil, v))
		}
		out.Write(p)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	tsharkFrame  = regexp.MustCompile(`(?m)^Frame \d+: `)
	tsharkExpert = regexp.MustCompile(`\[Expert Info \((Warning|Error)/[^)]*\): [^\]]*\]`)
)

// tsharkCheck has tshark dissect the frames and fails each one that it
// finds malformed, that it does not take for a PFCP message of the type
// sent, or that draws an expert warning or error.
func tsharkCheck(t *testing.T, frames []pcapFrame) {
	t.Helper()
	for i, problems := range tsharkProblems(t, frames) {
		interopCheck(t, "tshark: "+frames[i].name, problems)
	}
}

// tsharkProblems is what tshark finds wrong with each frame.
func tsharkProblems(t *testing.T, frames []pcapFrame) [][]string {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatal("tshark is missing: run scripts/deps.sh")
	}
	path := filepath.Join(t.TempDir(), "n4.pcap")
	writePcap(t, path, frames)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tshark", "-n", "-r", path, "-V",
		"-o", "pfcp.track_pfcp_session:TRUE", "-o", "udp.check_checksum:TRUE").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	text := string(out)
	starts := tsharkFrame.FindAllStringIndex(text, -1)
	if len(starts) != len(frames) {
		t.Fatalf("tshark read %d frames of %d:\n%s", len(starts), len(frames), out)
	}
	all := make([][]string, len(frames))
	for i, s := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		dissected := text[s[0]:end]
		var problems []string
		if strings.Contains(dissected, "Malformed") {
			problems = append(problems, "malformed")
		}
		problems = append(problems, tsharkExpert.FindAllString(dissected, -1)...)
		typ := frames[i].b[1]
		if !regexp.MustCompile(fmt.Sprintf(`\n    Message Type: [^\n]*\(%d\)\n`, typ)).MatchString(dissected) {
			problems = append(problems, fmt.Sprintf("not dissected as PFCP message type %d", typ))
		}
		if len(problems) > 0 {
			t.Logf("tshark on %s:\n%s", frames[i].name, dissected)
		}
		all[i] = problems
	}
	return all
}

// The check above must see what it looks for: a response cut short in an
// IE is malformed and draws an expert error; a sound one draws nothing.
func TestInteropTsharkCatchesMalformed(t *testing.T) {
	good := encode(t, message.NewHeartbeatResponse(1, ie.NewRecoveryTimeStamp(time.Unix(1_700_000_000, 0))))
	cut := slices.Clone(good)
	binary.BigEndian.PutUint16(cut[len(cut)-6:], 9) // the time stamp claims 9 octets of 4
	p := tsharkProblems(t, []pcapFrame{{"sound", good}, {"cut", cut}})
	if len(p[0]) > 0 {
		t.Errorf("a sound heartbeat response: %q", p[0])
	}
	if len(p[1]) != 2 || p[1][0] != "malformed" || !strings.HasPrefix(p[1][1], "[Expert Info (Error/Malformed)") {
		t.Errorf("a cut heartbeat response: %q, want malformed and an expert error", p[1])
	}
}
