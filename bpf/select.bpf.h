/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What is traced: the task filters (--pid, --comm, --cgroup), the device
 * filter (--dev) and the file behind a page-cache folio.
 */
#ifndef SPT_SELECT_BPF_H
#define SPT_SELECT_BPF_H

#define MAX_DEVS 256
#define MAX_PIDS 1024

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

/* --dev beyond the SPT_FILTER_DEVS_INLINE devices filter_devs holds */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_DEVS);
	__type(key, __u32);
	__type(value, __u8);
} dev_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

static __always_inline bool comm_matches(const char *comm)
{
	for (int i = 0; i < SPT_COMM_LEN; i++) {
		if (comm[i] != target_comm[i])
			return false;
		if (!comm[i])
			return true;
	}
	return true;
}

static __always_inline bool task_selected(void)
{
	if (filter_pid) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;

		if (!bpf_map_lookup_elem(&pid_filter, &tgid))
			return false;
	}
	if (filter_comm) {
		char comm[SPT_COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		if (!comm_matches(comm))
			return false;
	}
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	return true;
}

/*
 * Every write request and every dirtying under writeback asks: a few
 * compares of constants the verifier knows (n_filter_devs) where a hash
 * lookup hashes and walks a bucket. n_filter_devs is 0 when more devices
 * are selected than fit: dev_filter holds them all.
 */
static __always_inline bool dev_selected(__u32 dev)
{
	if (!filter_dev)
		return true;
	if (!n_filter_devs)
		return bpf_map_lookup_elem(&dev_filter, &dev);
	for (int i = 0; i < SPT_FILTER_DEVS_INLINE && i < n_filter_devs; i++)
		if (filter_devs[i] == dev)
			return true;
	return false;
}

/* A filesystem is selected by its s_dev or by its block device (btrfs
 * gives s_dev an anonymous number); the second is read only if needed. */
static __always_inline bool sb_selected(struct super_block *sb, __u32 dev)
{
	struct block_device *bdev;

	if (dev_selected(dev))
		return true;
	bdev = sb->s_bdev;
	return bdev && dev_selected(bdev->bd_dev);
}

/*
 * The file, superblock and device of a page-cache folio's mapping, if the
 * device passes the filter (writeback start: done by flushers, so no task
 * filter) or the device and the current task do.
 *
 * A block device's own page cache (write() to /dev/sdX, a mapping of it,
 * mkfs, and the filesystems' buffer heads) is the device inode's in the
 * bdev pseudo-filesystem, whose superblock ("bdev", 0:N) says nothing:
 * such a folio is counted on the device itself (bdev_cache), as metadata
 * of the filesystem mounted on it if there is one (owner).
 */
struct folio_file {
	struct inode *inode;
	struct super_block *sb;	   /* the mapping's: "bdev" for a device's cache */
	struct super_block *owner; /* bdev_cache: the filesystem mounted on it, or NULL */
	__u32 dev;		   /* sb->s_dev; bdev_cache: the device */
	bool bdev_cache;
};

/* include/uapi/linux/stat.h, unchanged since forever */
#define S_IFMT_ 00170000
#define S_IFBLK_ 0060000

/*
 * @mapping is a BTF pointer (every caller has one), so the chain is read by
 * direct loads: a plain load each, where bpf_probe_read_kernel() is a
 * helper call.
 */
static __always_inline bool folio_file_on_selected_dev(struct address_space *mapping,
						       struct folio_file *ff)
{
	struct inode *inode = mapping->host;
	struct super_block *sb = inode->i_sb;

	if (!sb)
		return false;
	ff->inode = inode;
	ff->sb = sb;
	ff->owner = NULL;
	ff->bdev_cache = (inode->i_mode & S_IFMT_) == S_IFBLK_;
	if (ff->bdev_cache) {
		ff->dev = inode->i_rdev;
		if (!dev_selected(ff->dev))
			return false;
		ff->owner = bdev_fs_owner(bdev_of_inode(inode));
		return true;
	}
	ff->dev = sb->s_dev;
	return sb_selected(sb, ff->dev);
}

static __always_inline bool folio_file_selected(struct address_space *mapping,
						struct folio_file *ff)
{
	return folio_file_on_selected_dev(mapping, ff) && task_selected();
}

/* folio->mapping of a page-cache folio; NULL for anonymous ones (their
 * mapping is an anon_vma, tagged: mapping_is_anon()) and truncated ones. */
static __always_inline struct address_space *folio_file_mapping(struct folio *folio)
{
	struct address_space *mapping = folio->mapping;

	return mapping_is_anon(btf_ptr_addr(mapping)) ? NULL : mapping;
}

#endif /* SPT_SELECT_BPF_H */
