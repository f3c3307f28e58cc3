// SPDX-License-Identifier: GPL-2.0
/* Unit tests of bpf/verify.h's pure tests: is an entry kept under a struct
 * request's address the request the kernel passes now (a requeue at issue,
 * the same request at completion)? Called from unit_tests.c's main. */
#include <linux/types.h>
#include "verify.h"
#include "check.h"

static const struct spt_verify_ident kept = {
	.bio = 0xffff888001234500, .sector = 2048, .bytes = 8192, .epoch = 3
};

/* At issue: only a requeue that block_rq_requeue marked keeps the hashes. */
static void test_requeue(void)
{
	struct spt_verify_ident now = kept;

	CHECK(spt_verify_is_requeue(&kept, 0, 1, &now));
	/* The host's false "changed": a completion went unseen and the next
	 * write of the same thread reused the struct request, the freed bio
	 * and the sector (a 16-page file), with other bytes. Unmarked: no. */
	CHECK(!spt_verify_is_requeue(&kept, 0, 0, &now));
	CHECK(!spt_verify_is_requeue(&kept, 4096, 1, &now));
	now.sector += 8;
	CHECK(!spt_verify_is_requeue(&kept, 0, 1, &now));
	now = kept;
	now.bio += 0x100;
	CHECK(!spt_verify_is_requeue(&kept, 0, 1, &now));
	now = kept;
	now.bytes = 4096;
	CHECK(!spt_verify_is_requeue(&kept, 0, 1, &now));
	now = kept;
	now.epoch = 4; /* issued before a pause */
	CHECK(!spt_verify_is_requeue(&kept, 0, 1, &now));
}

/* At completion: the request starts @done bytes further with the rest left. */
static void test_completes_kept(void)
{
	struct spt_verify_ident now = kept;

	CHECK(spt_verify_completes_kept(&kept, 0, &now));
	/* A partial completion of 4096 bytes: the second bio now leads. */
	now.bio = 0xffff888001234600;
	now.sector = kept.sector + 8;
	now.bytes = 4096;
	CHECK(spt_verify_completes_kept(&kept, 4096, &now));
	/* That partial completion went unseen: done is behind, no match. */
	CHECK(!spt_verify_completes_kept(&kept, 0, &now));
	/* Another request at the address, the same sector (its issue unseen
	 * or not sampled): another bio or size. */
	now = kept;
	now.bio += 0x100;
	CHECK(!spt_verify_completes_kept(&kept, 0, &now));
	now = kept;
	now.bytes = 4096;
	CHECK(!spt_verify_completes_kept(&kept, 0, &now));
	now = kept;
	now.epoch = 4;
	CHECK(!spt_verify_completes_kept(&kept, 0, &now));
	now = kept;
	CHECK(!spt_verify_completes_kept(&kept, 8192, &now)); /* all done already */
}

void verify_tests(void)
{
	test_requeue();
	test_completes_kept();
}
