/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 knowledge: the user register frame the kernel's entry code saves,
 * syscall numbers and the ABI constants the programs use. None of it is in
 * BTF and none of it has changed between kernel versions.
 */
#ifndef SPT_X86_BPF_H
#define SPT_X86_BPF_H

#define PAGE_SHIFT_X86 12
#define ENOSYS 38

/* arch/x86/include/asm/trap_pf.h: page fault error code bits */
#define X86_PF_WRITE 0x2
#define X86_PF_USER 0x4

/* arch/x86/entry/syscalls/syscall_64.tbl: the write family */
#define NR_WRITE_X86 1
#define NR_PWRITE64_X86 18
#define NR_WRITEV_X86 20
#define NR_PWRITEV_X86 296
#define NR_PWRITEV2_X86 328

/* arch/x86/include/uapi/asm/signal.h */
#define SIGKILL_X86 9
#define SIGSTOP_X86 19

/* include/uapi/asm-generic/fcntl.h: x86 uses the generic value */
#define O_APPEND_X86 00002000

/*
 * What brought the current task into the kernel? Read from the user
 * register frame the entry code saved:
 * - syscall entry stores the syscall number in orig_ax and -ENOSYS in ax
 *   until the syscall returns (what ptrace and seccomp rely on);
 * - a page fault stores its error code in orig_ax and the user's rax in ax;
 *   a write fault from user mode has X86_PF_WRITE | X86_PF_USER set.
 * No syscall hooks needed, so nothing runs on the syscall hot path.
 * Tasks without a user frame of their own are "other" (task_no_user_frame()),
 * and so are 32-bit (compat) syscalls.
 */
static __always_inline __u32 current_kind(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
	long nr;

	if (task_no_user_frame(task))
		return SPT_KIND_OTHER;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return SPT_KIND_OTHER;
	nr = regs->orig_ax;
	if ((long)regs->ax == -ENOSYS) {
		switch (nr) {
		case NR_WRITE_X86:
		case NR_PWRITE64_X86:
		case NR_WRITEV_X86:
		case NR_PWRITEV_X86:
		case NR_PWRITEV2_X86:
			return SPT_KIND_WRITE;
		default:
			return SPT_KIND_OTHER;
		}
	}
	if ((nr & (X86_PF_WRITE | X86_PF_USER)) == (X86_PF_WRITE | X86_PF_USER))
		return SPT_KIND_MMAP;
	return SPT_KIND_OTHER;
}

/*
 * The byte range of the current write-family syscall, from its registers
 * (di, si, dx, r10 carry arguments 1-4). Vector writes: the first 8
 * iovecs. An O_APPEND write starts at the end of the file.
 */
static __always_inline bool write_range(struct file *file, __u64 *pos, __u64 *count)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	long nr = regs->orig_ax;
	bool positional = nr == NR_PWRITE64_X86 || nr == NR_PWRITEV_X86 || nr == NR_PWRITEV2_X86;

	if (nr == NR_WRITE_X86 || nr == NR_PWRITE64_X86) {
		*count = regs->dx;
	} else {
		struct iovec iov[8];
		__u64 n = regs->dx;

		*count = 0;
		if (bpf_probe_read_user(iov, sizeof(iov), (void *)regs->si))
			return false;
		for (int i = 0; i < 8; i++)
			if (i < n)
				*count += iov[i].iov_len;
	}
	*pos = positional && (long)regs->r10 != -1 ? regs->r10 : BPF_CORE_READ(file, f_pos);
	if (BPF_CORE_READ(file, f_flags) & O_APPEND_X86)
		*pos = BPF_CORE_READ(file, f_inode, i_size);
	return *count > 0;
}

#endif /* SPT_X86_BPF_H */
