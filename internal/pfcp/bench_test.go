package pfcp

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
)

// BenchmarkN4 measures the N4 server with a real datapath, as one SMF on
// loopback sees it, and prints a table of medians:
//
//	go test -run '^$' -bench N4 -benchtime 1x -timeout 30m ./internal/pfcp
//
// Three parts, each kept when SLUICE_BENCH (a regexp) matches its name or
// is unset:
//
//   - establishment: rounds of pipelined establishments (benchWindow in
//     flight), each round deleted again, pipelined too: of the typical
//     session (typicalEstablishment), and of the establishment helper's
//     session, which names the UE address on the uplink PDR too;
//   - modification: one request at a time, an Update FAR moving the
//     downlink to the other gNB address (a path switch), as time from the
//     send to the answer;
//   - memory: the store filled to SLUICE_BENCH_SESSIONS sessions (default
//     1,000,000) through N4, then the kernel's map memory and the growth of
//     the Go heap over the empty server, per session. Modifications are
//     timed again there.
//
// The server logs at warn; SLUICE_BENCH_LOG=info makes it format its
// per-session info records (into io.Discard) as upfd does by default.
// SLUICE_BENCH_HEAP=file writes a heap profile with every session installed.
func BenchmarkN4(b *testing.B) {
	sessions := benchSessionCount(b)
	want := func(part string) bool {
		pat := os.Getenv("SLUICE_BENCH")
		return pat == "" || regexp.MustCompile(pat).MatchString(part)
	}
	if !want("establishment") && !want("modification") && !want("memory") && !want("takeover") {
		b.Skip("SLUICE_BENCH matches none of establishment, modification, memory, takeover")
	}
	// A margin over the sessions; and room in the SDF table, sized for a
	// quarter of the sessions, for a round with the UE address on uplink.
	capacity := max(sessions+sessions/64, 5*benchRoundSize)
	u := newBenchUPF(b, capacity, noJournal)
	kernEmpty, err := u.d.MapMemory()
	if err != nil {
		b.Fatal(err)
	}
	heapEmpty := heapAfterGC()
	c := dialSMF(b, u.addr)
	if err := c.associate(); err != nil {
		b.Fatal(err)
	}
	var f n4Figures
	f.sessions = sessions

	if want("establishment") {
		floor := dialSMF(b, startCodecFloor(b))
		// Pinned upfds keep a journal of the state: without and with fsync.
		journaled, synced := benchSMFOf(b, 5*benchRoundSize, writeJournal), benchSMFOf(b, 5*benchRoundSize, syncJournal)
		for round := range benchRounds {
			for _, k := range []struct {
				c    *benchSMF
				t    *template
				into *[]roundFigures
			}{{c, c.typical, &f.typical}, {c, c.uplinkUE, &f.uplinkUE}, {floor, floor.typical, &f.floor},
				{journaled, journaled.typical, &f.journaled}, {synced, synced.typical, &f.synced}} {
				r, err := k.c.round(k.t)
				if err != nil {
					b.Fatalf("round %d: %v", round+1, err)
				}
				*k.into = append(*k.into, r)
			}
			typ, ue := f.typical[round], f.uplinkUE[round]
			b.Logf("establishment round %d of %d: %.0f/s, deletion %.0f/s; with the UE address on uplink %.0f/s, %.0f/s; codec floor %.0f/s; journal %.0f/s, fsync %.0f/s",
				round+1, benchRounds, typ.est, typ.del, ue.est, ue.del, f.floor[round].est, f.journaled[round].est, f.synced[round].est)
		}
	}

	if want("takeover") {
		f.takeover = benchTakeOver(b, benchTakeOverSessions)
		b.Logf("take-over of %d sessions: %+v", benchTakeOverSessions, f.takeover)
	}

	var moved []uint64 // the sessions the modification rounds move
	if want("modification") {
		if moved, _, err = c.establishAll(c.typical, benchModSessions); err != nil {
			b.Fatalf("sessions to modify: %v", err)
		}
		if f.modFew, err = c.modifyRounds(moved); err != nil {
			b.Fatal(err)
		}
		b.Logf("modification with %d sessions: %v", len(moved), f.modFew)
	}

	if want("memory") {
		start, deadline := time.Now(), time.Now().Add(10*time.Minute)
		for left := sessions - len(moved); left > 0; {
			n := min(left, benchRoundSize)
			_, took, err := c.establishAll(c.typical, n)
			if err != nil {
				b.Fatalf("filling, %d sessions in: %v", sessions-left, err)
			}
			left -= n
			f.fillLast = float64(n) / took.Seconds()
			if time.Now().After(deadline) {
				b.Fatalf("filling: %d sessions in 10 minutes, %d to go", sessions-left, left)
			}
		}
		f.fill = time.Since(start)
		if f.kern, err = u.d.MapMemory(); err != nil {
			b.Fatal(err)
		}
		logMapMemory(b, u.d, sessions)
		f.kernEmpty = kernEmpty
		f.heapCache = heapAfterGC() - heapEmpty
		b.Logf("%d sessions in %v; kernel maps %d MiB (%d MiB empty), Go heap +%d MiB", sessions,
			f.fill.Round(time.Millisecond), f.kern>>20, kernEmpty>>20, f.heapCache>>20)
		if path := os.Getenv("SLUICE_BENCH_HEAP"); path != "" {
			writeHeapProfile(b, path)
		}
		if moved != nil {
			if f.modFull, err = c.modifyRounds(moved); err != nil {
				b.Fatal(err)
			}
			b.Logf("modification with %d sessions: %v", sessions, f.modFull)
		}
		// Responses are kept for retransmissions: wait until they expire,
		// and the server's ticker has dropped them, for the steady heap.
		time.Sleep(cacheFor + 2*time.Second)
		f.heap = heapAfterGC() - heapEmpty
	}
	f.retransmits = c.retransmits
	f.report(b)
	f.print(os.Stdout)
}

const (
	benchRounds      = 9
	benchRoundSize   = 20_000 // establishments a round; the fill goes in steps of this
	benchWindow      = 128    // requests in flight
	benchModSessions = 1000   // sessions moved in each modification round

	benchTakeOverSessions = 100_000
)

func benchSessionCount(b *testing.B) int {
	s := os.Getenv("SLUICE_BENCH_SESSIONS")
	if s == "" {
		return 1_000_000
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < benchModSessions {
		b.Fatalf("SLUICE_BENCH_SESSIONS=%q: want a number of at least %d", s, benchModSessions)
	}
	return n
}

func memStats() *runtime.MemStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return &m
}

// processCPU is the user and system time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func heapAfterGC() uint64 {
	runtime.GC()
	return memStats().HeapAlloc
}

func writeHeapProfile(b *testing.B, path string) {
	fh, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(fh, 0); err != nil {
		b.Fatal(err)
	}
}

// benchUPF is a server on loopback with a datapath in a UPF namespace,
// sized for capacity sessions: the TEID range and a UE pool of 10.0.0.0/8
// are wide enough for the whole benchmark.
type benchUPF struct {
	d       *datapath.Datapath
	srv     *Server
	addr    netip.AddrPort
	journal string // its path, if it keeps one
}

// journalMode is how a bench UPF keeps its state.
type journalMode int

const (
	noJournal    journalMode = iota
	writeJournal             // as a pinned upfd: a journal, written
	syncJournal              // and each commit on the disk (state_fsync)
)

// benchSMFOf is an associated SMF of a new bench UPF.
func benchSMFOf(b *testing.B, capacity int, mode journalMode) *benchSMF {
	c := dialSMF(b, newBenchUPF(b, capacity, mode).addr)
	if err := c.associate(); err != nil {
		b.Fatal(err)
	}
	return c
}

func newBenchUPF(b *testing.B, capacity int, mode journalMode) *benchUPF {
	u := &benchUPF{d: loadDatapath(b, capacity)}
	u.srv = newBenchServer(b, u.d, capacity)
	if mode != noJournal {
		u.journal = filepath.Join(b.TempDir(), "state.journal")
		j, _, err := OpenState(u.journal)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { j.Close() })
		if err := u.srv.Keep(j, "bench", mode == syncJournal); err != nil {
			b.Fatal(err)
		}
	}
	serve(b, u.srv)
	u.addr = u.srv.Addr()
	return u
}

// newBenchServer is a bench UPF's server, not yet serving.
func newBenchServer(b *testing.B, d *datapath.Datapath, capacity int) *Server {
	store := session.NewStore(session.Options{TEIDFirst: 0x100, TEIDLast: math.MaxUint32, AccessAddrs: []netip.Addr{n3},
		Pools: map[string][]netip.Prefix{"internet": {netip.MustParsePrefix("10.0.0.0/8")}}, MaxSessions: capacity})
	level := slog.LevelWarn
	if os.Getenv("SLUICE_BENCH_LOG") == "info" {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: level}))
	cfg := Config{NodeID: "198.18.4.2", Listen: netip.MustParseAddrPort("127.0.0.1:0"), Recovery: time.Unix(1_700_000_000, 0)}
	srv, err := New(cfg, store, newCompiler(d), d, log)
	if err != nil {
		b.Fatal(err)
	}
	return srv
}

// takeOverFigures are what a new upfd does after a crash, with the
// journal the killed one left: read it, restore the state from it, and
// compare the state with the maps.
type takeOverFigures struct {
	sessions               int
	journal                int64 // bytes
	read, restore, compare time.Duration
}

// benchTakeOver fills a journaled upfd with n typical sessions, copies
// its journal as a process killed then would leave it, and times what
// the next process does with it, on the same maps.
func benchTakeOver(b *testing.B, n int) takeOverFigures {
	u := newBenchUPF(b, n+n/64, writeJournal)
	c := dialSMF(b, u.addr)
	if err := c.associate(); err != nil {
		b.Fatal(err)
	}
	for left := n; left > 0; left -= benchRoundSize {
		if _, _, err := c.establishAll(c.typical, min(left, benchRoundSize)); err != nil {
			b.Fatal(err)
		}
	}
	// Every response was answered, so every record is written: the
	// writer sends a turn's datagrams only after its record.
	img := filepath.Join(b.TempDir(), "crashed.journal")
	data, err := os.ReadFile(u.journal)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(img, data, 0o600); err != nil {
		b.Fatal(err)
	}
	f := takeOverFigures{sessions: n, journal: int64(len(data))}
	next := newBenchServer(b, u.d, n+n/64)
	start := time.Now()
	j, st, err := OpenState(img)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	f.read = time.Since(start)
	if err := st.For("bench"); err != nil || st.Sessions() != n {
		b.Fatalf("the journal of %d sessions reads as %d (%v)", n, st.Sessions(), err)
	}
	start = time.Now()
	if err := next.Restore(st); err != nil {
		b.Fatal(err)
	}
	f.restore = time.Since(start)
	start = time.Now()
	t, err := next.Reconcile(u.d)
	if err != nil {
		b.Fatal(err)
	}
	f.compare = time.Since(start)
	if t != (Takeover{}) {
		b.Fatalf("the maps differ from the state the journal holds: %+v", t)
	}
	return f
}

// benchSMF is the benchmark's SMF: one socket connected to the UPF.
// Pipelined requests are made from templates, encoded once, whose
// sequence number, SEIDs and UE address are rewritten in place: encoding
// each with go-pfcp would add the client's cost to the server's on the
// same two CPUs.
type benchSMF struct {
	conn   *net.UDPConn
	seq    uint32 // the last sequence number used
	cpSEID uint64 // the last CP SEID used
	ue     uint32 // the last UE address given, as a number
	// typical is the session of the issue; uplinkUE names the UE address
	// in the uplink PDI too.
	typical, uplinkUE, del *template
	out, in                []byte

	retransmits int
}

// template is an encoded session request. Session messages carry the S
// flag, so the header has the SEID at 4 and the sequence number at 12.
type template struct {
	b    []byte
	seid int   // offset of the SEID to set: the header's or the CP F-SEID's
	ue   []int // offsets of the UE's IPv4 address
}

const seqAt = 12

func dialSMF(b *testing.B, upf netip.AddrPort) *benchSMF {
	conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(upf))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	if err := conn.SetReadBuffer(4 << 20); err != nil {
		b.Fatal(err)
	}
	c := &benchSMF{conn: conn, out: make([]byte, 0, 2048), in: make([]byte, 65535), ue: 10 << 24}
	if c.typical, err = newEstTemplate(typicalEstablishment(0, estMark)); err != nil {
		b.Fatal(err)
	}
	if c.uplinkUE, err = newEstTemplate(establishment(0, estMark)); err != nil {
		b.Fatal(err)
	}
	del, err := marshal(message.NewSessionDeletionRequest(0, 0, 0, 0, 0))
	if err != nil {
		b.Fatal(err)
	}
	c.del = &template{b: del, seid: 4}
	return c
}

// typicalEstablishment is the session of the issue: the establishment
// helper's, with the uplink PDR matching on its F-TEID alone. (The
// helper's names the UE address in the uplink PDI too, as Open5GS does;
// the compiler makes a source filter of it, which takes an SDF slot.)
func typicalEstablishment(seq uint32, cpSEID uint64) *message.SessionEstablishmentRequest {
	m := establishment(seq, cpSEID)
	m.CreatePDR[0] = ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
		ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0d, 0, nil, nil, 5),
			ie.NewNetworkInstance("internet")),
		ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1), ie.NewQERID(1), ie.NewURRID(1))
	return m
}

// estMark is the CP SEID an establishment template is encoded with, to be
// found and replaced; the UE address is the helper's 10.45.0.2.
const estMark = 0x5eed_f00d_cafe_d00d

func newEstTemplate(m *message.SessionEstablishmentRequest) (*template, error) {
	b, err := marshal(m)
	if err != nil {
		return nil, err
	}
	t := &template{b: b, seid: bytes.Index(b, binary.BigEndian.AppendUint64(nil, estMark))}
	ue := []byte{10, 45, 0, 2}
	for i := 0; ; i += len(ue) {
		k := bytes.Index(b[i:], ue)
		if k < 0 {
			break
		}
		i += k
		t.ue = append(t.ue, i)
	}
	if t.seid < 0 || len(t.ue) == 0 {
		return nil, fmt.Errorf("establishment template: CP SEID at %d, UE address at %v", t.seid, t.ue)
	}
	return t, nil
}

func marshal(m message.Message) ([]byte, error) {
	b := make([]byte, m.MarshalLen())
	return b, m.MarshalTo(b)
}

func (c *benchSMF) next() uint32 { c.seq++; return c.seq }

func putSeq(b []byte, seq uint32) {
	b[seqAt], b[seqAt+1], b[seqAt+2] = byte(seq>>16), byte(seq>>8), byte(seq)
}

func (c *benchSMF) associate() error {
	b, err := marshal(message.NewAssociationSetupRequest(c.next(), smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0))))
	if err != nil {
		return err
	}
	resp, err := c.exchange(b)
	if err != nil {
		return fmt.Errorf("association setup: %w", err)
	}
	m, err := message.Parse(resp)
	if err != nil {
		return fmt.Errorf("association setup response: %w", err)
	}
	if cause := causeIn(m); cause != session.CauseAccepted {
		return fmt.Errorf("association setup: cause %d", cause)
	}
	return c.checkScan()
}

// checkScan establishes one session the slow way, to check that
// scanResponse reads a response as go-pfcp does.
func (c *benchSMF) checkScan() error {
	c.cpSEID++
	c.ue++
	b := c.typical.encode(c.out[:0], c.cpSEID, c.ue)
	putSeq(b, c.next())
	resp, err := c.exchange(b)
	if err != nil {
		return err
	}
	m, err := message.Parse(resp)
	if err != nil {
		return err
	}
	r, ok := scanResponse(resp)
	est, isEst := m.(*message.SessionEstablishmentResponse)
	if !ok || !isEst || est.UPFSEID == nil {
		return fmt.Errorf("establishment answered with %v", m)
	}
	f, err := est.UPFSEID.FSEID()
	if err != nil {
		return err
	}
	if r.seq != c.seq || r.cause != causeIn(m) || r.cause != session.CauseAccepted || r.seid != f.SEID {
		return fmt.Errorf("scanned %+v; go-pfcp reads sequence %d, cause %d, UP SEID %#x", r, c.seq, causeIn(m), f.SEID)
	}
	_, err = c.deleteAll([]uint64{r.seid})
	return err
}

// exchange sends one request and waits for the answer with its sequence
// number.
func (c *benchSMF) exchange(req []byte) ([]byte, error) {
	sent, _ := scanResponse(req) // the header is read the same way
	if _, err := c.conn.Write(req); err != nil {
		return nil, err
	}
	if err := c.conn.SetReadDeadline(time.Now().Add(2 * time.Second)); err != nil {
		return nil, err
	}
	for {
		k, err := c.conn.Read(c.in)
		if err != nil {
			return nil, fmt.Errorf("no answer to request %d: %w", sent.seq, err)
		}
		if r, ok := scanResponse(c.in[:k]); ok && r.seq == sent.seq {
			return c.in[:k], nil
		}
	}
}

// encode appends the request to out with the SEID and, if the template
// has one, the UE address given.
func (t *template) encode(out []byte, seid uint64, ue uint32) []byte {
	b := append(out, t.b...)
	binary.BigEndian.PutUint64(b[t.seid:], seid)
	for _, at := range t.ue {
		binary.BigEndian.PutUint32(b[at:], ue)
	}
	return b
}

// establishAll establishes n sessions, each with its own CP SEID and UE
// address, pipelined, and returns their SEIDs and how long it took. Any
// cause but Request accepted fails it.
func (c *benchSMF) establishAll(t *template, n int) ([]uint64, time.Duration, error) {
	seids := make([]uint64, n)
	base := c.cpSEID + 1
	c.cpSEID += uint64(n)
	ue := c.ue
	c.ue += uint32(n)
	took, err := c.pipeline(n, func(i int, out []byte) []byte {
		return t.encode(out, base+uint64(i), ue+1+uint32(i))
	}, func(i int, r response) error {
		if r.cause != session.CauseAccepted || r.seid == 0 {
			return fmt.Errorf("establishment %d: cause %d, UP SEID %#x", i, r.cause, r.seid)
		}
		seids[i] = r.seid
		return nil
	})
	return seids, took, err
}

// deleteAll deletes the sessions, pipelined.
func (c *benchSMF) deleteAll(seids []uint64) (time.Duration, error) {
	return c.pipeline(len(seids), func(i int, out []byte) []byte {
		return c.del.encode(out, seids[i], 0)
	}, func(i int, r response) error {
		if r.cause != session.CauseAccepted {
			return fmt.Errorf("deletion of %#x: cause %d", seids[i], r.cause)
		}
		return nil
	})
}

// pipeline sends n requests, made by req into the buffer it is given,
// keeping up to benchWindow unanswered, and hands each answer to check.
// Request i has sequence number seq+1+i. When nothing comes back for a
// while, the unanswered are sent again as they were: the server answers a
// retransmission from its cache, and a late second answer is ignored.
func (c *benchSMF) pipeline(n int, req func(i int, out []byte) []byte, check func(i int, r response) error) (time.Duration, error) {
	const retransmitAfter, attempts = time.Second, 10
	base := c.seq + 1
	c.seq += uint32(n)
	done := make([]bool, n)
	send := func(i int) error {
		b := req(i, c.out[:0])
		putSeq(b, base+uint32(i))
		_, err := c.conn.Write(b)
		return err
	}
	sent, answered, oldest, stalls := 0, 0, 0, 0
	start := time.Now()
	for answered < n {
		for ; sent < n && sent-answered < benchWindow; sent++ {
			if err := send(sent); err != nil {
				return 0, err
			}
		}
		if err := c.conn.SetReadDeadline(time.Now().Add(retransmitAfter)); err != nil {
			return 0, err
		}
		k, err := c.conn.Read(c.in)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			if stalls++; stalls == attempts {
				return 0, fmt.Errorf("request %d of %d: no answer after %d attempts", oldest, n, attempts)
			}
			for i := oldest; i < sent; i++ {
				if !done[i] {
					if err := send(i); err != nil {
						return 0, err
					}
					c.retransmits++
				}
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		r, ok := scanResponse(c.in[:k])
		i := int((r.seq - base) & 0xffffff)
		if !ok || i >= sent || done[i] {
			continue
		}
		if err := check(i, r); err != nil {
			return 0, err
		}
		done[i], answered, stalls = true, answered+1, 0
		for oldest < sent && done[oldest] {
			oldest++
		}
	}
	return time.Since(start), nil
}

// response is what the benchmark needs of an answer.
type response struct {
	seq   uint32
	cause uint8
	seid  uint64 // of the UP F-SEID, when there is one
}

// scanResponse reads a message's header and walks its top-level IEs
// (TS 29.244 §7.2.2, §8.1.1) without decoding the rest.
func scanResponse(b []byte) (response, bool) {
	var r response
	if len(b) < 8 {
		return r, false
	}
	hdr := 8
	if b[0]&0x01 != 0 {
		hdr = 16
	}
	if len(b) < hdr {
		return r, false
	}
	r.seq = uint32(b[hdr-4])<<16 | uint32(b[hdr-3])<<8 | uint32(b[hdr-2])
	for p := hdr; p+4 <= len(b); {
		t, l := binary.BigEndian.Uint16(b[p:]), int(binary.BigEndian.Uint16(b[p+2:]))
		v := b[p+4 : min(p+4+l, len(b))]
		switch {
		case t == ie.Cause && len(v) >= 1:
			r.cause = v[0]
		case t == ie.FSEID && len(v) >= 9:
			r.seid = binary.BigEndian.Uint64(v[1:])
		}
		p += 4 + l
	}
	return r, true
}

// latencies are the times of modifications in µs, by round.
type latencies [][]float64

func (l latencies) p50() float64 { return l.median(0.50) }
func (l latencies) p99() float64 { return l.median(0.99) }

// median is the median over rounds of the quantile q of each.
func (l latencies) median(q float64) float64 {
	var v []float64
	for _, r := range l {
		v = append(v, quantile(r, q))
	}
	return median(v)
}

func (l latencies) String() string {
	return fmt.Sprintf("p50 %.1f µs, p90 %.1f, p99 %.1f, p99.9 %.1f, max %.1f",
		l.p50(), l.median(0.9), l.p99(), l.median(0.999), l.median(1))
}

// modifyRounds moves the downlink of each session to the other gNB
// address, one request at a time, for benchRounds rounds after one round
// that is not timed (the first one opens the buffering FAR).
func (c *benchSMF) modifyRounds(seids []uint64) (latencies, error) {
	var l latencies
	gnbs := []string{"198.18.3.1", "198.18.3.11"}
	for round := range benchRounds + 1 {
		took := make([]float64, len(seids))
		for i, seid := range seids {
			m := message.NewSessionModificationRequest(0, 0, seid, c.next(), 0,
				ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
					ie.NewUpdateForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
						ie.NewOuterHeaderCreation(0x0100, uint32(0x1000+round), gnbs[round%2], "", 0, 0, 0))))
			b, err := marshal(m)
			if err != nil {
				return l, err
			}
			start := time.Now()
			resp, err := c.exchange(b)
			took[i] = float64(time.Since(start).Nanoseconds()) / 1e3
			if err != nil {
				return l, fmt.Errorf("modification of %#x: %w", seid, err)
			}
			if r, _ := scanResponse(resp); r.cause != session.CauseAccepted {
				return l, fmt.Errorf("modification of %#x: cause %d", seid, r.cause)
			}
		}
		if round > 0 {
			l = append(l, took)
		}
	}
	return l, nil
}

func quantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

func median(v []float64) float64 { return quantile(v, 0.5) }

// roundFigures are one round's: establishments and deletions a second,
// and per establishment the whole process's allocations, bytes allocated
// and CPU time in µs (server, client, GC, their system calls: unlike the
// rate, what the host's other tenants take does not count).
type roundFigures struct{ est, del, allocs, bytes, cpu float64 }

// round establishes benchRoundSize sessions of t, pipelined, and deletes
// them again the same way.
func (c *benchSMF) round(t *template) (roundFigures, error) {
	var r roundFigures
	before, cpuBefore := memStats(), processCPU()
	seids, took, err := c.establishAll(t, benchRoundSize)
	if err != nil {
		return r, fmt.Errorf("establishment: %w", err)
	}
	cpu, after := processCPU(), memStats()
	r.est = benchRoundSize / took.Seconds()
	r.allocs = float64(after.Mallocs-before.Mallocs) / benchRoundSize
	r.bytes = float64(after.TotalAlloc-before.TotalAlloc) / benchRoundSize
	r.cpu = float64((cpu - cpuBefore).Microseconds()) / benchRoundSize
	if took, err = c.deleteAll(seids); err != nil {
		return r, fmt.Errorf("deletion: %w", err)
	}
	r.del = benchRoundSize / took.Seconds()
	return r, nil
}

// medianOf is the median over rounds of one figure of each.
func medianOf(rounds []roundFigures, figure func(roundFigures) float64) float64 {
	v := make([]float64, len(rounds))
	for i, r := range rounds {
		v[i] = figure(r)
	}
	return median(v)
}

// The figures of a round, for medianOf.
func estPerSec(r roundFigures) float64    { return r.est }
func delPerSec(r roundFigures) float64    { return r.del }
func allocsPerEst(r roundFigures) float64 { return r.allocs }
func bytesPerEst(r roundFigures) float64  { return r.bytes }
func cpuPerEst(r roundFigures) float64    { return r.cpu }

// xFloor is upfd's establishment rate over the codec floor's, round by round.
func (f *n4Figures) xFloor() float64 { return ratioByRound(f.typical, f.floor) }

// ratioByRound is the median of a's establishment rate over b's, round by
// round: rounds run interleaved, so each ratio compares like with like.
func ratioByRound(a, b []roundFigures) float64 {
	v := make([]float64, min(len(a), len(b)))
	for i := range v {
		v[i] = a[i].est / b[i].est
	}
	return median(v)
}

type n4Figures struct {
	sessions int
	// per round: the typical session; the UE address in the uplink PDI
	// too; the typical session through the codec floor
	typical, uplinkUE, floor []roundFigures
	// the typical session through upfds that keep a journal, without
	// and with fsync
	journaled, synced []roundFigures
	takeover          takeOverFigures
	modFew, modFull   latencies // with benchModSessions sessions, and with all
	fill              time.Duration
	fillLast          float64 // establishments/s in the fill's last step
	kern, kernEmpty   uint64  // map memory with every session, and with none
	heapCache         uint64  // heap growth with every session, responses still cached
	heap              uint64  // heap growth once the responses expired
	retransmits       int
}

func (f *n4Figures) perSession(v uint64) float64 { return float64(v) / float64(f.sessions) }

func (f *n4Figures) report(b *testing.B) {
	if len(f.typical) > 0 {
		b.ReportMetric(medianOf(f.typical, estPerSec), "est/s")
		b.ReportMetric(medianOf(f.typical, delPerSec), "del/s")
		b.ReportMetric(medianOf(f.typical, allocsPerEst), "allocs/est")
		b.ReportMetric(medianOf(f.typical, cpuPerEst), "cpu-µs/est")
		b.ReportMetric(f.xFloor(), "x-floor")
	}
	if len(f.modFew) > 0 {
		b.ReportMetric(f.modFew.p50(), "mod-p50-µs")
		b.ReportMetric(f.modFew.p99(), "mod-p99-µs")
	}
	if f.kern > 0 {
		b.ReportMetric(f.perSession(f.kern), "kernel-B/session")
		b.ReportMetric(f.perSession(f.heap), "heap-B/session")
		b.ReportMetric(f.perSession(f.kern+f.heap), "B/session")
	}
}

func (f *n4Figures) print(w io.Writer) {
	fmt.Fprintf(w, "\n| N4 | figure | goal |\n| --- | ---: | ---: |\n")
	row := func(name, format string, v float64, goal string) {
		fmt.Fprintf(w, "| %s | "+format+" | %s |\n", name, v, goal)
	}
	if len(f.typical) > 0 {
		row(fmt.Sprintf("establishments/s, %d in flight, rounds of %d", benchWindow, benchRoundSize), "%.0f", medianOf(f.typical, estPerSec), "50000")
		row("deletions/s, the same way", "%.0f", medianOf(f.typical, delPerSec), "")
		row("allocations per establishment", "%.0f", medianOf(f.typical, allocsPerEst), "")
		row("bytes allocated per establishment", "%.0f", medianOf(f.typical, bytesPerEst), "")
		row("CPU µs per establishment, the whole process (server, client, GC)", "%.1f", medianOf(f.typical, cpuPerEst), "")
		row("establishments/s, the UE address in the uplink PDI too (Open5GS)", "%.0f", medianOf(f.uplinkUE, estPerSec), "")
		row("deletions/s of those", "%.0f", medianOf(f.uplinkUE, delPerSec), "")
		row("codec floor (go-pfcp decodes and answers, no session): establishments/s", "%.0f", medianOf(f.floor, estPerSec), "")
		row("codec floor: CPU µs per establishment", "%.1f", medianOf(f.floor, cpuPerEst), "")
		row("establishments/s as a ratio to the codec floor, by round", "%.2f", f.xFloor(), "")
		row("establishments/s, pinned: the state journal written", "%.0f", medianOf(f.journaled, estPerSec), "")
		row("the same as a ratio to no journal, by round", "%.2f", ratioByRound(f.journaled, f.typical), "0.9")
		row("CPU µs per establishment, the journal written", "%.1f", medianOf(f.journaled, cpuPerEst), "")
		row("bytes allocated per establishment, the journal written", "%.0f", medianOf(f.journaled, bytesPerEst), "")
		row("establishments/s, pinned with state_fsync: each commit synced", "%.0f", medianOf(f.synced, estPerSec), "")
		row("the same as a ratio to no journal, by round", "%.2f", ratioByRound(f.synced, f.typical), "")
		row("CPU µs per establishment, with state_fsync", "%.1f", medianOf(f.synced, cpuPerEst), "")
	}
	if to := f.takeover; to.sessions > 0 {
		fmt.Fprintf(w, "| take-over after a crash, %d sessions, a %.0f MB journal: read / state restored / compared with the maps, ms | %d / %d / %d | |\n",
			to.sessions, float64(to.journal)/1e6, to.read.Milliseconds(), to.restore.Milliseconds(), to.compare.Milliseconds())
	}
	if len(f.modFew) > 0 {
		row(fmt.Sprintf("modification (path switch) p50 µs, %d sessions", benchModSessions), "%.1f", f.modFew.p50(), "")
		row(fmt.Sprintf("modification (path switch) p99 µs, %d sessions", benchModSessions), "%.1f", f.modFew.p99(), "")
	}
	if f.kern == 0 {
		fmt.Fprintf(w, "\nMedians of %d rounds. %d retransmissions.\n", benchRounds, f.retransmits)
		return
	}
	if len(f.modFull) > 0 {
		row(fmt.Sprintf("modification p50 µs, %d sessions", f.sessions), "%.1f", f.modFull.p50(), "")
		row(fmt.Sprintf("modification p99 µs, %d sessions", f.sessions), "%.1f", f.modFull.p99(), "")
	}
	row(fmt.Sprintf("filling to %d sessions: establishments/s", f.sessions), "%.0f", float64(f.sessions)/f.fill.Seconds(), "")
	row(fmt.Sprintf("the last %d of them: establishments/s", benchRoundSize), "%.0f", f.fillLast, "")
	row(fmt.Sprintf("kernel maps, bytes/session (%d MiB; %d MiB empty)", f.kern>>20, f.kernEmpty>>20), "%.0f", f.perSession(f.kern), "")
	row("Go heap, bytes/session, responses cached for retransmission", "%.0f", f.perSession(f.heapCache), "")
	row(fmt.Sprintf("Go heap, bytes/session, after %v (responses expired)", cacheFor), "%.0f", f.perSession(f.heap), "")
	row("total, bytes/session (kernel + heap after expiry)", "%.0f", f.perSession(f.kern+f.heap), "1024")
	fmt.Fprintf(w, "\nMedians of %d rounds; memory with %d sessions installed, the heap over the empty server after a GC. %d retransmissions.\n",
		benchRounds, f.sessions, f.retransmits)
}

// logMapMemory logs the kernel's memory map by map, per session, largest
// first: where the kernel's share of a session goes.
func logMapMemory(b *testing.B, d *datapath.Datapath, sessions int) {
	byMap, err := d.MapMemoryByName()
	if err != nil {
		b.Fatal(err)
	}
	names := slices.SortedFunc(maps.Keys(byMap), func(x, y string) int { return cmp.Compare(byMap[y], byMap[x]) })
	var line strings.Builder
	for _, name := range names {
		fmt.Fprintf(&line, " %s %.0f", name, float64(byMap[name])/float64(sessions))
	}
	b.Logf("kernel maps, bytes/session:%s", line.String())
}
