#!/usr/bin/env python3
"""An SMF made of scapy's PFCP layer (scapy.contrib.pfcp), for interop_test.go.

Usage: scapy_n4.py HOST PORT

Runs one N4 dialog against the UPF at HOST:PORT, every request encoded and
every response decoded by scapy, never by go-pfcp: association setup, a
heartbeat, two Open5GS-like session establishments (UE address given, UE
address chosen from the pool), one establishment the UPF must refuse, a
modification and a deletion. For each exchange it prints one JSON line with
what scapy read of the response; the Go test holds the expectations. Exit
status 1 means the dialog itself broke (no answer, an answer scapy cannot
take apart); the message is on stderr.

Written against scapy 2.6.1, which scripts/deps.sh installs in the
repository's .venv. Its PFCP layer follows TS 29.244 V15.6.0; what the UPF
and Open5GS use from later releases is patched in below, each patch saying
why.
"""

import json
import socket
import sys

from scapy.fields import (
    BitEnumField, BitField, ByteField, ConditionalField, IP6Field, IPField,
    XBitField, XLongField,
)
from scapy.packet import Raw
from scapy.contrib import pfcp
from scapy.contrib.pfcp import (
    PFCP, ExtraDataField, IE_Base, IE_Cause, IE_CreatedPDR, IE_CreateFAR,
    IE_CreatePDR, IE_CreateQER, IE_CreateURR, IE_DestinationInterface,
    IE_EnterpriseSpecific, IE_FAR_Id, IE_ForwardingParameters, IE_FSEID,
    IE_FTEID, IE_GateStatus, IE_MBR, IE_MeasurementMethod, IE_NetworkInstance,
    IE_NodeId, IE_NotImplemented, IE_OffendingIE, IE_OuterHeaderCreation,
    IE_OuterHeaderRemoval, IE_PDI, IE_PDR_Id, IE_Precedence, IE_QER_Id, IE_QFI,
    IE_RecoveryTimeStamp, IE_ReportingTriggers, IE_SDF_Filter,
    IE_SourceInterface, IE_UpdateFAR, IE_UpdateForwardingParameters,
    IE_URR_Id, IE_UsageReport_SDR, PFCPAssociationSetupRequest,
    PFCPHeartbeatRequest, PFCPSessionDeletionRequest,
    PFCPSessionEstablishmentRequest, PFCPSessionModificationRequest,
)

# --- Patches to scapy 2.6.1 -------------------------------------------------
# Each replaces the class scapy would use for one IE type, for building and,
# through ietypecls (what IE_Dispatcher looks up), for decoding too.


class IE_ApplyAction16(IE_Base):
    """Apply Action (§8.2.26) in its Release 16 form: two octets.

    scapy knows only the first octet (DROP..DUPL under three spare bits).
    Open5GS sends two octets, and the UPF must read either; the second
    octet's flags are all clear here."""
    name = "IE Apply Action"
    ie_type = 44
    fields_desc = IE_Base.fields_desc + [
        BitField("DFRT", 0, 1),
        BitField("IPMD", 0, 1),
        BitField("IPMA", 0, 1),
        BitField("DUPL", 0, 1),
        BitField("NOCP", 0, 1),
        BitField("BUFF", 0, 1),
        BitField("FORW", 0, 1),
        BitField("DROP", 0, 1),
        XBitField("spare", 0, 4),
        BitField("MBSU", 0, 1),
        BitField("FSSM", 0, 1),
        BitField("DDPN", 0, 1),
        BitField("BDPN", 0, 1),
        ExtraDataField("extra_data"),
    ]


class IE_UEIPAddress16(IE_Base):
    """UE IP Address (§8.2.62) with the Release 16 flags.

    scapy has five spare bits where Release 16 put IP6PL, CHV6, CHV4 and
    IPv6D: without CHV4 an SMF cannot ask the UPF to choose the address
    (the UEIP feature the UPF announces)."""
    name = "IE UE IP Address"
    ie_type = 93
    fields_desc = IE_Base.fields_desc + [
        XBitField("spare", 0, 1),
        BitField("IP6PL", 0, 1),
        BitField("CHV6", 0, 1),
        BitField("CHV4", 0, 1),
        BitField("IPv6D", 0, 1),
        BitField("SD", 0, 1),
        BitField("V4", 0, 1),
        BitField("V6", 0, 1),
        ConditionalField(IPField("ipv4", 0),
                         lambda x: x.V4 == 1 and x.CHV4 == 0),
        ConditionalField(IP6Field("ipv6", 0),
                         lambda x: x.V6 == 1 and x.CHV6 == 0),
        ConditionalField(ByteField("ipv6_prefix_delegation_bits", 0),
                         lambda x: x.IPv6D == 1),
        ConditionalField(ByteField("ipv6_prefix_length", 0),
                         lambda x: x.IP6PL == 1),
        ExtraDataField("extra_data"),
    ]


# 3GPP Interface Type values (§8.2.118): scapy names only 0 to 15, and
# its enum fixes the names when the class is made, so the field is
# redeclared with the values an SMF puts on N3 and N6.
INTERFACE_TYPES = {11: "N3 3GPP Access", 15: "N9", 17: "N6"}


class IE_3GPPInterfaceType16(IE_Base):
    """3GPP Interface Type (§8.2.118), values past 15 named."""
    name = "IE 3GPP Interface Type"
    ie_type = 160
    fields_desc = IE_Base.fields_desc + [
        XBitField("spare", 0, 2),
        BitEnumField("interface_type", 11, 6, INTERFACE_TYPES),
        ExtraDataField("extra_data"),
    ]


class IE_UPFunctionFeatures16(IE_Base):
    """UP Function Features (§8.2.25) with octets 7 and 8.

    scapy decodes octets 5 and 6 only; the UPF announces UEIP, which is
    octet 7 bit 3, and scapy would leave it in extra_data. Octet 6 bit 8,
    spare in scapy, is EPFAR since Release 15."""
    name = "IE UP Function Features"
    ie_type = 43
    fields_desc = IE_Base.fields_desc + [
        BitField("TREU", 0, 1),
        BitField("HEEU", 0, 1),
        BitField("PFDM", 0, 1),
        BitField("FTUP", 0, 1),
        BitField("TRST", 0, 1),
        BitField("DLBD", 0, 1),
        BitField("DDND", 0, 1),
        BitField("BUCP", 0, 1),
        BitField("EPFAR", 0, 1),
        BitField("PFDE", 0, 1),
        BitField("FRRT", 0, 1),
        BitField("TRACE", 0, 1),
        BitField("QUOAC", 0, 1),
        BitField("UDBC", 0, 1),
        BitField("PDIU", 0, 1),
        BitField("EMPU", 0, 1),
        ConditionalField(BitField("GCOM", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("BUNDL", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("MTE", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("MNOP", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("SSET", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("UEIP", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("ADPDP", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("DPDRA", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("MPTCP", 0, 1), lambda x: (x.length or 0) > 3),
        ConditionalField(BitField("TSCU", 0, 1), lambda x: (x.length or 0) > 3),
        ConditionalField(BitField("IP6PL", 0, 1), lambda x: (x.length or 0) > 3),
        ConditionalField(BitField("IPTV", 0, 1), lambda x: (x.length or 0) > 3),
        ConditionalField(BitField("NORP", 0, 1), lambda x: (x.length or 0) > 3),
        ConditionalField(BitField("VTIME", 0, 1), lambda x: (x.length or 0) > 3),
        ConditionalField(BitField("RTTL", 0, 1), lambda x: (x.length or 0) > 3),
        ConditionalField(BitField("MPAS", 0, 1), lambda x: (x.length or 0) > 3),
        ExtraDataField("extra_data"),
    ]


class IE_UsageReportTrigger16(IE_Base):
    """Usage Report Trigger (§8.2.41) with its third octet.

    scapy knows two octets; the UPF sends the three of Release 16 (TERMR,
    in octet 6, on a deletion)."""
    name = "IE Usage Report Trigger"
    ie_type = 63
    fields_desc = IE_Base.fields_desc + [
        BitField("IMMER", 0, 1),
        BitField("DROTH", 0, 1),
        BitField("STOPT", 0, 1),
        BitField("START", 0, 1),
        BitField("QUHTI", 0, 1),
        BitField("TIMTH", 0, 1),
        BitField("VOLTH", 0, 1),
        BitField("PERIO", 0, 1),
        BitField("EVETH", 0, 1),
        BitField("MACAR", 0, 1),
        BitField("ENVCL", 0, 1),
        BitField("MONIT", 0, 1),
        BitField("TERMR", 0, 1),
        BitField("LIUSA", 0, 1),
        BitField("TIMQU", 0, 1),
        BitField("VOLQU", 0, 1),
        ConditionalField(XBitField("spare", 0, 2), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("UPINT", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("EMRRE", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("QUVTI", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("IPMJL", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("TEBUR", 0, 1), lambda x: (x.length or 0) > 2),
        ConditionalField(BitField("EVEQU", 0, 1), lambda x: (x.length or 0) > 2),
        ExtraDataField("extra_data"),
    ]


class IE_VolumeMeasurement15(IE_Base):
    """Volume Measurement (§8.2.44) with packet counts.

    scapy knows the three volumes; since Release 15 the IE also carries
    the number of packets (TONOP, ULNOP, DLNOP), which the UPF reports."""
    name = "IE Volume Measurement"
    ie_type = 66
    fields_desc = IE_Base.fields_desc + [
        XBitField("spare", 0, 2),
        BitField("DLNOP", 0, 1),
        BitField("ULNOP", 0, 1),
        BitField("TONOP", 0, 1),
        BitField("DLVOL", 0, 1),
        BitField("ULVOL", 0, 1),
        BitField("TOVOL", 0, 1),
        ConditionalField(XLongField("total", 0), lambda x: x.TOVOL == 1),
        ConditionalField(XLongField("uplink", 0), lambda x: x.ULVOL == 1),
        ConditionalField(XLongField("downlink", 0), lambda x: x.DLVOL == 1),
        ConditionalField(XLongField("total_packets", 0), lambda x: x.TONOP == 1),
        ConditionalField(XLongField("uplink_packets", 0), lambda x: x.ULNOP == 1),
        ConditionalField(XLongField("downlink_packets", 0), lambda x: x.DLNOP == 1),
        ExtraDataField("extra_data"),
    ]


for _cls in (IE_ApplyAction16, IE_UEIPAddress16, IE_3GPPInterfaceType16,
             IE_UPFunctionFeatures16, IE_UsageReportTrigger16,
             IE_VolumeMeasurement15):
    pfcp.ietypecls[_cls.ie_type] = _cls

# Reporting Triggers (§8.2.19) has a third octet since Release 16; scapy
# knows two, so the third goes in as extra data, all triggers clear.
REPORTING_TRIGGERS_OCTET_7 = b"\x00"

# Not patched, on purpose:
# - Network Instance: scapy encodes it as DNS labels ("\x08internet"), the
#   APN/DNN encoding §8.2.4 points to (TS 23.003 §9.1), as Open5GS does.
# - The PFCP header sets S=1 unless told: node messages say S=0 below.

# --- The dialog ---------------------------------------------------------------

SMF_ADDR = "198.18.4.1"
GNB = "198.18.3.1"
RECOVERY = 3_900_000_000  # NTP seconds


def node_id():
    return IE_NodeId(id_type=0, ipv4=SMF_ADDR)


def network_instance():
    return IE_NetworkInstance(instance="internet")


def establishment(cp_seid, ue_ip, extra=()):
    """What an Open5GS SMF sends for a new PDU session: an uplink PDR on an
    F-TEID the UPF chooses, a downlink PDR for the UE address, a FAR each
    way, a QER and a volume URR shared by both PDRs."""
    if ue_ip is None:
        ue = IE_UEIPAddress16(SD=1, V4=1, CHV4=1)
    else:
        ue = IE_UEIPAddress16(SD=1, V4=1, ipv4=ue_ip)
    uplink = IE_CreatePDR(IE_list=[
        IE_PDR_Id(id=1),
        IE_Precedence(precedence=255),
        IE_PDI(IE_list=[
            IE_SourceInterface(interface=0),  # Access
            IE_FTEID(CH=1, CHID=1, V4=1, choose_id=5),
            network_instance(),
            IE_QFI(QFI=9),
            IE_3GPPInterfaceType16(interface_type=11),  # N3 3GPP Access
        ]),
        IE_OuterHeaderRemoval(header=0),  # GTP-U/UDP/IPv4
        IE_FAR_Id(id=1),
        IE_URR_Id(id=1),
        IE_QER_Id(id=1),
    ])
    downlink = IE_CreatePDR(IE_list=[
        IE_PDR_Id(id=2),
        IE_Precedence(precedence=255),
        IE_PDI(IE_list=[
            IE_SourceInterface(interface=1),  # Core
            network_instance(),
            ue,
            IE_SDF_Filter(FD=1, flow_description="permit out ip from any to assigned"),
            IE_3GPPInterfaceType16(interface_type=17),  # N6
        ]),
        IE_FAR_Id(id=2),
        IE_URR_Id(id=1),
        IE_QER_Id(id=1),
    ])
    to_core = IE_CreateFAR(IE_list=[
        IE_FAR_Id(id=1),
        IE_ApplyAction16(FORW=1),
        IE_ForwardingParameters(IE_list=[
            IE_DestinationInterface(interface=1),  # Core
            network_instance(),
            IE_3GPPInterfaceType16(interface_type=17),
        ]),
    ])
    to_access = IE_CreateFAR(IE_list=[
        IE_FAR_Id(id=2),
        IE_ApplyAction16(FORW=1),
        IE_ForwardingParameters(IE_list=[
            IE_DestinationInterface(interface=0),  # Access
            network_instance(),
            IE_OuterHeaderCreation(GTPUUDPIPV4=1, TEID=0x40000001, ipv4=GNB),
            IE_3GPPInterfaceType16(interface_type=11),
        ]),
    ])
    qer = IE_CreateQER(IE_list=[
        IE_QER_Id(id=1),
        IE_GateStatus(ul=0, dl=0),  # open both ways
        IE_MBR(ul=1_000_000, dl=2_000_000),  # kbit/s
        IE_QFI(QFI=9),
    ])
    urr = IE_CreateURR(IE_list=[
        IE_URR_Id(id=1),
        IE_MeasurementMethod(VOLUM=1),
        IE_ReportingTriggers(volume_threshold=1,
                             extra_data=REPORTING_TRIGGERS_OCTET_7),
    ])
    ies = [node_id(), IE_FSEID(v4=1, seid=cp_seid, ipv4=SMF_ADDR),
           uplink, downlink, to_core, to_access, qer, urr, *extra]
    return PFCPSessionEstablishmentRequest(IE_list=ies)


def walk(ies):
    for i in ies:
        yield i
        yield from walk(getattr(i, "IE_list", None) or [])


def undecoded(pkt):
    """What scapy could not take apart: IEs it does not know, octets left
    over inside an IE it knows, or after the message."""
    out = []
    for i in walk(pkt.IE_list if hasattr(pkt, "IE_list") else []):
        if isinstance(i, (IE_NotImplemented, IE_EnterpriseSpecific)):
            out.append(f"IE {i.ietype} not known")
        elif getattr(i, "extra_data", b""):
            out.append(f"{i.name}: extra octets {i.extra_data.hex()}")
    if pkt.haslayer(Raw):
        out.append(f"trailing octets {bytes(pkt[Raw]).hex()}")
    return out


def summary(step, resp):
    msg = resp.payload
    ies = list(walk(getattr(msg, "IE_list", None) or []))

    def first(cls):
        return next((i for i in ies if isinstance(i, cls)), None)

    s = {
        "step": step,
        "type": resp.message_type,
        "seid": resp.seid if resp.S else None,
        "cause": first(IE_Cause).cause if first(IE_Cause) else None,
        "offending": first(IE_OffendingIE).type if first(IE_OffendingIE) else None,
        "up_seid": first(IE_FSEID).seid if first(IE_FSEID) else None,
        "created": [],
        "features": {},
        "usage_reports": [],
        "undecoded": undecoded(msg),
        "rebuilt": bytes(resp) == resp.original,
        "response": resp.original.hex(),
    }
    for c in (i for i in ies if isinstance(i, IE_CreatedPDR)):
        kids = {type(k): k for k in c.IE_list}
        pdr = {"pdr": kids[IE_PDR_Id].id if IE_PDR_Id in kids else None}
        if IE_FTEID in kids:
            f = kids[IE_FTEID]
            pdr["teid"], pdr["ipv4"] = f.TEID, f.ipv4 if f.V4 else None
        if IE_UEIPAddress16 in kids:
            pdr["ue_ipv4"] = kids[IE_UEIPAddress16].ipv4
        s["created"].append(pdr)
    for u in (i for i in ies if isinstance(i, IE_UsageReport_SDR)):
        kids = {type(k): k for k in u.IE_list}
        r = {"urr": kids[IE_URR_Id].id if IE_URR_Id in kids else None}
        if IE_UsageReportTrigger16 in kids:
            t = kids[IE_UsageReportTrigger16]
            r["triggers"] = [f.name for f in t.fields_desc[2:]
                             if f.name.isupper() and t.getfieldval(f.name)]
        if IE_VolumeMeasurement15 in kids:
            v = kids[IE_VolumeMeasurement15]
            r["volume"] = {f: getattr(v, f) for f in ("TOVOL", "TONOP")}
        s["usage_reports"].append(r)
    f = first(IE_UPFunctionFeatures16)
    if f:
        s["features"] = {
            fd.name: 1 for fd in IE_UPFunctionFeatures16.fields_desc
            if fd.name not in ("ietype", "length", "extra_data") and getattr(f, fd.name, None) == 1}
    return s


# Heartbeat, PFD Management, Association Setup/Update/Release, Node Report,
# Session Set Deletion, Session Establishment/Modification/Deletion/Report.
REQUEST_TYPES = {1, 3, 5, 7, 9, 12, 14, 50, 52, 54, 56}


class SMF:
    def __init__(self, host, port):
        self.upf = (host, port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(5)
        self.seq = 0

    def ask(self, step, msg, seid=None):
        self.seq += 1
        if seid is None:
            req = PFCP(S=0, seq=self.seq) / msg
        else:
            req = PFCP(S=1, seid=seid, seq=self.seq) / msg
        self.sock.sendto(bytes(req), self.upf)
        while True:
            try:
                b, _ = self.sock.recvfrom(65535)
            except socket.timeout:
                sys.exit(f"{step}: no response")
            resp = PFCP(b)
            # The UPF's own requests (heartbeats, reports) are not answers.
            if resp.message_type not in REQUEST_TYPES:
                break
        if resp.seq != self.seq:
            sys.exit(f"{step}: response numbered {resp.seq}, want {self.seq}")
        s = summary(step, resp)
        s["request"] = bytes(req).hex()
        print(json.dumps(s), flush=True)
        return s


def main():
    smf = SMF(sys.argv[1], int(sys.argv[2]))
    smf.ask("association setup", PFCPAssociationSetupRequest(IE_list=[
        node_id(), IE_RecoveryTimeStamp(timestamp=RECOVERY)]))
    smf.ask("heartbeat", PFCPHeartbeatRequest(IE_list=[
        IE_RecoveryTimeStamp(timestamp=RECOVERY)]))
    est = smf.ask("establishment", establishment(0x1001, "10.45.0.7"), seid=0)
    smf.ask("establishment choosing the UE address", establishment(0x1002, None), seid=0)
    no_far = IE_CreatePDR(IE_list=[
        IE_PDR_Id(id=3),
        IE_Precedence(precedence=10),
        IE_PDI(IE_list=[IE_SourceInterface(interface=1),
                        IE_UEIPAddress16(SD=1, V4=1, ipv4="10.45.0.8")]),
        IE_FAR_Id(id=9),
    ])
    smf.ask("establishment with a PDR naming a FAR that is not there",
            establishment(0x1003, "10.45.0.8", [no_far]), seid=0)
    up = est["up_seid"] or 0
    # Xn handover: downlink now goes to another gNB's tunnel.
    smf.ask("modification", PFCPSessionModificationRequest(IE_list=[
        IE_UpdateFAR(IE_list=[
            IE_FAR_Id(id=2),
            IE_ApplyAction16(FORW=1),
            IE_UpdateForwardingParameters(IE_list=[
                IE_DestinationInterface(interface=0),
                IE_OuterHeaderCreation(GTPUUDPIPV4=1, TEID=0x40000002,
                                       ipv4="198.18.3.11"),
            ]),
        ])]), seid=up)
    smf.ask("deletion", PFCPSessionDeletionRequest(IE_list=[]), seid=up)


if __name__ == "__main__":
    main()
