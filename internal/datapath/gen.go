package datapath

// The objects are generated with a pinned clang (make generate) and committed.
//go:generate go tool bpf2go -cc clang-19 -cflags "-O2 -mcpu=v3 -g -Wall -Werror -nostdinc -I../../bpf/include -I../../bpf" -target bpfel -type upf_rules -type upf_far_inline -type upf_pdr -type upf_pdr_pair -type upf_sdf -type upf_far -type upf_qer -type upf_urr -type upf_usage -type upf_if_stats -type upf_event -type upf_fteid_key -type upf_ue6_key -type upf_addr -type upf_drop -type upf_iface -type upf_event_type bpf ../../bpf/upf.bpf.c
