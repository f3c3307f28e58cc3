/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Latency histograms (struct spt_hist, slots in log2 microseconds),
 * aggregated in the kernel.
 */
#ifndef SPT_HIST_BPF_H
#define SPT_HIST_BPF_H

/*
 * A direct-mapped table first, the hash map for a key whose row another
 * key holds. Every write request and every violation's end adds a sample;
 * an array lookup is a few instructions where a hash lookup hashes and
 * walks a bucket.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << SPT_HIST_TABLE_LOG2);
	__type(key, __u32);
	__type(value, struct spt_hist_entry);
} hist_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct spt_hist_key);
	__type(value, struct spt_hist);
} hists SEC(".maps");

static struct spt_hist zero_hist;

/* The key's row in hist_table, claimed now if it is free; NULL if another
 * key holds it. */
static __always_inline struct spt_hist *hist_table_row(__u64 key_word)
{
	__u32 i = fib_hash(key_word, SPT_HIST_TABLE_LOG2);
	struct spt_hist_entry *e = bpf_map_lookup_elem(&hist_table, &i);
	__u64 cur;

	if (!e || !key_word)
		return NULL;
	cur = e->key_word;
	if (!cur)
		cur = __sync_val_compare_and_swap(&e->key_word, 0, key_word);
	return !cur || cur == key_word ? &e->h : NULL;
}

/* A histogram's key, and the same as the word hist_table is indexed by. */
union hist_key {
	struct spt_hist_key key;
	__u64 word;
};

static __always_inline __u64 hist_key_word(__u32 dev, __u16 type, __u16 kind)
{
	union hist_key k = { .key = { .dev = dev, .type = type, .kind = kind } };

	return k.word;
}

/* The slot of a sample of @ns: log2 of its microseconds, the last one
 * holding the rest. */
static __always_inline __u32 hist_slot(__u64 ns)
{
	__u64 us = ns / 1000;
	__u32 slot = us ? log2_u64(us) : 0;

	return slot < SPT_HIST_SLOTS ? slot : SPT_HIST_SLOTS - 1;
}

/* The histogram of @word, made if it is new; NULL if no row is left. */
static __always_inline struct spt_hist *hist_row(__u64 word)
{
	struct spt_hist *h = hist_table_row(word);
	union hist_key k = { .word = word };

	if (h)
		return h;
	h = bpf_map_lookup_elem(&hists, &k.key);
	if (h)
		return h;
	bpf_map_update_elem(&hists, &k.key, &zero_hist, BPF_NOEXIST);
	return bpf_map_lookup_elem(&hists, &k.key);
}

/*
 * Add a sample of @ns to the histogram of @word. Its slot is computed last:
 * log2_u64() gives the verifier one state per slot, which every branch
 * taken while it is live would multiply.
 */
static __always_inline void hist_add_ns(__u64 word, __u64 ns)
{
	struct spt_hist *h = hist_row(word);

	if (!h)
		return;
	__sync_fetch_and_add(&h->slots[hist_slot(ns)], 1);
	__sync_fetch_and_add(&h->sum_ns, ns);
}

/* Add samples counted per slot (@counts), summing to @sum_ns. */
static __always_inline void hist_add_counts(__u64 word, const __u32 *counts, __u64 sum_ns)
{
	struct spt_hist *h = hist_row(word);

	if (!h)
		return;
	for (int i = 0; i < SPT_HIST_SLOTS; i++)
		if (counts[i])
			__sync_fetch_and_add(&h->slots[i], counts[i]);
	__sync_fetch_and_add(&h->sum_ns, sum_ns);
}

static __always_inline void hist_add(__u32 dev, __u16 type, __u16 kind, __u64 ns)
{
	hist_add_ns(hist_key_word(dev, type, kind), ns);
}

#endif /* SPT_HIST_BPF_H */
