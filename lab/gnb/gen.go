package gnb

// The object is generated with a pinned clang (make generate) and committed.
//go:generate go tool bpf2go -cc clang-19 -cflags "-O2 -mcpu=v3 -g -Wall -Werror -nostdinc -I../../bpf/include" -target bpfel gnb ../../bpf/lab/gnb.bpf.c
