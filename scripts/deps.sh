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
have tshark || need+=(tshark)

if ((${#need[@]})); then
	echo "deps: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# tshark asks whether non-root users may capture; the default (no) is fine
	echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
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
