module github.com/sluice-upf/sluice

go 1.26

require (
	github.com/cilium/ebpf v0.22.0 // indirect
	github.com/gopacket/gopacket v1.7.7 // indirect
	golang.org/x/sys v0.45.0 // indirect
)

tool github.com/cilium/ebpf/cmd/bpf2go
