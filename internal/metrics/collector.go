package metrics

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/pfcp"
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// The UPF's metrics. Help texts say what is counted, where, and the TS
// 28.552 measurement it gives; docs/metrics.md has the same table.
var (
	receivePackets = desc("upf_datapath_receive_packets_total",
		"Frames that arrived on an interface, by role (n3, n6, n9): every frame the XDP program saw, whatever its verdict. "+
			"On n3 the G-PDUs among them are TS 28.552 GTP.InDataPktN3UPF.", "interface")
	receiveBytes = desc("upf_datapath_receive_bytes_total",
		"Bytes of the frames that arrived on an interface, Ethernet header included, by role. "+
			"On n3: TS 28.552 GTP.InDataOctN3UPF; the rate on n6 gives TS 28.552 IP.N6IncLinkUsage.", "interface")
	transmitPackets = desc("upf_datapath_transmit_packets_total",
		"Frames the datapath sent out of an interface (redirected or sent back), by role; frames the kernel sends are not counted. "+
			"On n3: TS 28.552 GTP.OutDataPktN3UPF.", "interface")
	transmitBytes = desc("upf_datapath_transmit_bytes_total",
		"Bytes of the frames the datapath sent out of an interface, Ethernet header included, by role. "+
			"On n3: TS 28.552 GTP.OutDataOctN3UPF; the rate on n6 gives TS 28.552 IP.N6OutLinkUsage.", "interface")
	verdictPackets = desc("upf_datapath_packets_total",
		"Frames the datapath handled, by the XDP action they left with: aborted, drop, pass (to the kernel), tx (back out), redirect (forwarded). "+
			"No TS 28.552 counterpart.", "verdict")
	droppedPackets = desc("upf_datapath_dropped_packets_total",
		"Frames the datapath dropped, by reason (no_session, no_pdr, far_drop, mbr, buffered, …; docs/metrics.md). "+
			"No TS 28.552 counterpart.", "reason")

	receivedMessages = desc("upf_pfcp_received_messages_total",
		"PFCP messages received on N4, decodable or not, by message type (TS 29.244 Table 7.3-1; \"other\" for types it does not define). "+
			"message_type=\"Session Establishment Request\" is TS 28.552 SM.N4SessionEstabReq.", "message_type")
	sentMessages = desc("upf_pfcp_sent_messages_total",
		"PFCP messages sent on N4, retransmissions included, by message type. "+
			"message_type=\"Session Report Request\" is TS 28.552 SM.N4SessionReport.", "message_type")
	sentResponses = desc("upf_pfcp_sent_responses_total",
		"PFCP responses sent with a Cause, by message type and cause (TS 29.244 Table 8.2.1-1); acceptances are exported from the start, other causes from their first response. "+
			"Session Establishment Responses with a cause other than \"Request accepted (success)\" are TS 28.552 SM.N4SessionEstabFail.cause.",
		"message_type", "cause")
	sessionReports = desc("upf_pfcp_session_reports_total",
		"Session Report Requests sent, by report type (DLDR, USAR, ERIR, UPIR; TS 29.244 §8.2.21), retransmissions included: "+
			"a request with two flags counts under both. TS 28.552 SM.N4SessionReport counts the requests themselves (upf_pfcp_sent_messages_total).", "report_type")
	sessions = desc("upf_pfcp_sessions",
		"PFCP sessions installed. Sampled, it gives the UPF's side of TS 28.552 SM.SessionNbrMean and SM.SessionNbrMax.")
	associations = desc("upf_pfcp_associations",
		"PFCP associations with SMFs, by state: up, or lost (a heartbeat went unanswered; its sessions are kept for the grace period). "+
			"No TS 28.552 counterpart.", "state")

	bufferPackets = desc("upf_buffer_packets",
		"Downlink frames held for sessions whose FAR buffers (TS 29.244 §5.2.4), waiting for the gNB's tunnel. No TS 28.552 counterpart.")
	bufferDropped = desc("upf_buffer_dropped_packets_total",
		"Downlink frames the buffer never delivered, by reason: overflow (over the session's or the total bound), "+
			"discarded (the SMF asked to drop the buffer, or the session went). No TS 28.552 counterpart.", "reason")

	journalRecords = desc("upf_state_journal_records_total",
		"Records appended to the state journal (state_file), each the changes of N4 state one turn of the server made, written before its messages left. "+
			"Only with pin_path set. No TS 28.552 counterpart.")
	journalBytes = desc("upf_state_journal_bytes_total",
		"Bytes of the records appended to the state journal. No TS 28.552 counterpart.")
	journalRewrites = desc("upf_state_journal_rewrites_total",
		"Times the state journal was written whole: at the start, when compacted, and to repair it after a failure. No TS 28.552 counterpart.")
	journalErrors = desc("upf_state_journal_errors_total",
		"Writes and syncs of the state journal that failed (a full disk, an I/O error). No TS 28.552 counterpart.")
	journalSize = desc("upf_state_journal_size_bytes",
		"The state journal's size on disk. No TS 28.552 counterpart.")
	journalBehind = desc("upf_state_journal_behind",
		"1 while the state journal lacks a change (a write failed and the whole state could not be written again yet): a crash now would lose N4 state. No TS 28.552 counterpart.")

	collectorSuccess = desc("upf_scrape_collector_success",
		"1 if the last scrape read this part of the UPF, 0 if it could not (its metrics are missing from that scrape).", "collector")
	collectorDuration = desc("upf_scrape_collector_duration_seconds",
		"How long the last scrape took to read this part of the UPF.", "collector")
)

// Collectors, as upf_scrape_collector_success names them.
const (
	partDatapath  = "datapath"
	partPFCP      = "pfcp"       // the message counters
	partPFCPState = "pfcp_state" // what the serve loop holds
)

// collector reads the UPF at scrape time.
type collector struct {
	src Sources
}

func newCollector(src Sources) *collector {
	if src.StateWait <= 0 {
		src.StateWait = DefaultStateWait
	}
	return &collector{src: src}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		receivePackets, receiveBytes, transmitPackets, transmitBytes, verdictPackets, droppedPackets,
		receivedMessages, sentMessages, sentResponses, sessionReports, sessions, associations,
		bufferPackets, bufferDropped, journalRecords, journalBytes, journalRewrites, journalErrors, journalSize, journalBehind,
		collectorSuccess, collectorDuration,
	} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	if c.src.Datapath != nil {
		c.timed(ch, partDatapath, func() bool { return c.collectDatapath(ch) })
	}
	if c.src.N4 != nil {
		c.timed(ch, partPFCP, func() bool { collectPFCP(ch, c.src.N4.Stats()); return true })
		c.timed(ch, partPFCPState, func() bool { return c.collectState(ch) })
	}
}

// timed runs one part and reports whether it succeeded and how long it took.
func (c *collector) timed(ch chan<- prometheus.Metric, part string, read func() bool) {
	start := time.Now()
	ok := read()
	took := time.Since(start).Seconds()
	ch <- prometheus.MustNewConstMetric(collectorSuccess, prometheus.GaugeValue, boolValue(ok), part)
	ch <- prometheus.MustNewConstMetric(collectorDuration, prometheus.GaugeValue, took, part)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v uint64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v int, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
}

// Interface roles and XDP verdicts as labels.
var (
	roles    = []datapath.Role{datapath.N3, datapath.N6, datapath.N9}
	verdicts = [...]string{
		datapath.Aborted: "aborted", datapath.Dropped: "drop", datapath.Passed: "pass",
		datapath.Transmitted: "tx", datapath.Redirected: "redirect",
	}
)

// dropReasons are the reasons the datapath names, every one of them
// exported even at zero, so that a rate over a reason's first drops is
// right.
var dropReasons = namedDropReasons()

func namedDropReasons() []datapath.DropReason {
	var out []datapath.DropReason
	for r := datapath.DropReason(1); !strings.HasPrefix(r.String(), "drop("); r++ {
		out = append(out, r)
	}
	return out
}

func (c *collector) collectDatapath(ch chan<- prometheus.Metric) bool {
	s, err := c.src.Datapath.Stats()
	if err != nil {
		return false
	}
	for _, r := range roles {
		i, name := s.Interfaces[r], r.String()
		counter(ch, receivePackets, i.Rx.Packets, name)
		counter(ch, receiveBytes, i.Rx.Bytes, name)
		counter(ch, transmitPackets, i.Tx.Packets, name)
		counter(ch, transmitBytes, i.Tx.Bytes, name)
	}
	for v, name := range verdicts {
		counter(ch, verdictPackets, s.Verdicts[v], name)
	}
	for _, r := range dropReasons {
		counter(ch, droppedPackets, s.Drops[r], r.String())
	}
	for r, n := range s.Drops { // one a newer datapath names and we do not
		if int(r) > len(dropReasons) {
			counter(ch, droppedPackets, n, r.String())
		}
	}
	return true
}

// messageTypes are the label values of the message types, "" for the
// types TS 29.244 does not define (counted together as "other"), and
// whether each is a response.
var messageTypes, isResponse = func() (names [256]string, responses [256]bool) {
	for t := range 256 {
		if name, ok := pfcp.MessageTypeName(uint8(t)); ok {
			names[t], responses[t] = name, strings.HasSuffix(name, " Response")
		}
	}
	return names, responses
}()

// collectPFCP reads the message counters: every type TS 29.244 defines,
// the others summed as "other"; causes as collectCauses says.
func collectPFCP(ch chan<- prometheus.Metric, st *pfcp.Stats) {
	var otherRx, otherTx uint64
	for t, name := range messageTypes {
		typ := uint8(t)
		if name == "" {
			otherRx += st.Received(typ)
			otherTx += st.Sent(typ)
			continue
		}
		counter(ch, receivedMessages, st.Received(typ), name)
		counter(ch, sentMessages, st.Sent(typ), name)
		if isResponse[t] {
			collectCauses(ch, st, typ, name)
		}
	}
	counter(ch, receivedMessages, otherRx, "other")
	counter(ch, sentMessages, otherTx, "other")
	for bit := range pfcp.ReportTypeBits {
		if n := st.Reports(bit); n > 0 || bit <= pfcp.ReportUPIR {
			counter(ch, sessionReports, n, pfcp.ReportTypeName(bit))
		}
	}
}

// answered are the responses the UPF sends with a Cause: their
// acceptances are exported from the start, at zero, so that a rate or a
// success ratio is right from the first one; other causes once they
// occur.
var answered = map[uint8]bool{
	message.MsgTypeAssociationSetupResponse: true, message.MsgTypeAssociationUpdateResponse: true,
	message.MsgTypeAssociationReleaseResponse: true, message.MsgTypeSessionEstablishmentResponse: true,
	message.MsgTypeSessionModificationResponse: true, message.MsgTypeSessionDeletionResponse: true,
}

func collectCauses(ch chan<- prometheus.Metric, st *pfcp.Stats, typ uint8, name string) {
	for c := range 256 {
		cause := uint8(c)
		if n := st.Responses(typ, cause); n > 0 || (cause == ie.CauseRequestAccepted && answered[typ]) {
			counter(ch, sentResponses, n, name, pfcp.CauseName(cause))
		}
	}
}

// collectState asks the serve loop for its gauges, waiting at most
// StateWait.
func (c *collector) collectState(ch chan<- prometheus.Metric) bool {
	ctx, cancel := context.WithTimeout(context.Background(), c.src.StateWait)
	defer cancel()
	g, err := c.src.N4.Gauges(ctx)
	if err != nil {
		return false
	}
	gauge(ch, sessions, g.Sessions)
	gauge(ch, associations, g.AssociationsUp, "up")
	gauge(ch, associations, g.AssociationsLost, "lost")
	gauge(ch, bufferPackets, g.BufferedPackets)
	counter(ch, bufferDropped, g.BufferOverflowed, "overflow")
	counter(ch, bufferDropped, g.BufferDiscarded, "discarded")
	if j := g.Journal; j != nil {
		counter(ch, journalRecords, j.Records)
		counter(ch, journalBytes, j.Bytes)
		counter(ch, journalRewrites, j.Rewrites)
		counter(ch, journalErrors, j.Errors)
		gauge(ch, journalSize, int(j.Size))
		ch <- prometheus.MustNewConstMetric(journalBehind, prometheus.GaugeValue, boolValue(j.Behind))
	}
	return true
}
