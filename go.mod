module github.com/sluice-upf/sluice

go 1.26

require (
	github.com/cilium/ebpf v0.22.0 // indirect
	github.com/gopacket/gopacket v1.7.7 // indirect
	github.com/wmnsk/go-pfcp v0.0.24 // indirect
	golang.org/x/image v0.44.0
	golang.org/x/sys v0.45.0 // indirect
	golang.org/x/text v0.40.0 // indirect
	gopkg.in/yaml.v3 v3.0.1
)

tool github.com/cilium/ebpf/cmd/bpf2go
