/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bit, hash, pointer and clock helpers (cf. libbpf-tools' bits.bpf.h).
 * Included by stablepage.bpf.c after its settings (ptr_base_addr).
 */
#ifndef SPT_BITS_BPF_H
#define SPT_BITS_BPF_H

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

/* Fibonacci hashing: the top @bits bits of @v times 2^64 / phi, which
 * spreads keys that differ in any bits over the direct-mapped tables. */
static __always_inline __u32 fib_hash(__u64 v, __u32 bits)
{
	return (v * 0x9E3779B97F4A7C15ULL) >> (64 - bits);
}

/*
 * A BTF pointer's address as a number, for hashing and its low bits. The
 * verifier allows no arithmetic on such a pointer but adding an offset, yet
 * lets a privileged program subtract one pointer from another (a number;
 * adjust_reg_min_max_vals(), allow_ptr_leaks, since 4.14): the distance to
 * the global ptr_base_addr, plus that global's own address, read once.
 * Two instructions, where a bpf_probe_read_kernel() of the pointer is a
 * helper call. The barrier keeps the compiler from folding the two into a
 * scalar minus a pointer, which the verifier rejects.
 */
static __always_inline __u64 btf_ptr_addr(const void *ptr)
{
	__u64 dist = (__u64)ptr;

	if (!ptr_base_addr) {
		const void *base = &ptr_base_addr;

		bpf_probe_read_kernel(&ptr_base_addr, sizeof(ptr_base_addr), &base);
	}
	dist -= (__u64)&ptr_base_addr;
	barrier_var(dist);
	return dist + ptr_base_addr;
}

/* The time of a completion, read at its first use: *now is 0 until then. */
static __always_inline __u64 completion_time(__u64 *now)
{
	if (!*now)
		*now = bpf_ktime_get_ns();
	return *now;
}

#endif /* SPT_BITS_BPF_H */
