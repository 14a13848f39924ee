package tgen

// The objects are generated with a pinned clang (make generate) and
// committed. The programs write a frame through pointers of several types
// and read it back to sum it: as in the kernel, no strict aliasing.
//go:generate go tool bpf2go -cc clang-19 -cflags "-O2 -mcpu=v3 -g -Wall -Werror -fno-strict-aliasing -nostdinc -I../../bpf/include" -target bpfel -type lab_flow tgen ../../bpf/lab/tgen.bpf.c
//go:generate go tool bpf2go -cc clang-19 -cflags "-O2 -mcpu=v3 -g -Wall -Werror -fno-strict-aliasing -nostdinc -I../../bpf/include" -target bpfel -type lab_flow sink ../../bpf/lab/sink.bpf.c
