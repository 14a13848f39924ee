package refs

// The objects are generated with a pinned clang (make generate) and committed.
//go:generate go tool bpf2go -cc clang-19 -cflags "-O2 -mcpu=v3 -g -Wall -Werror -nostdinc -I../../bpf/include" -target bpfel ref ../../bpf/lab/ref.bpf.c
//go:generate go tool bpf2go -cc clang-19 -cflags "-O2 -mcpu=v3 -g -Wall -Werror -nostdinc -I../../bpf/include" -target bpfel minupf ../../bpf/lab/minupf.bpf.c
