// SPDX-License-Identifier: GPL-2.0
/* The JSON reader (jsonread.c) on any text: values one after the other as
 * report reads them; every value walked; its strings valid C strings that
 * json_string writes back as JSON the reader takes again. */
#include "fuzz.h"

static void rewrite(const char *s)
{
	free(fuzz_json_roundtrip(s));
}

static void walk(const struct jv *v, int depth)
{
	FUZZ_ASSERT(depth <= JV_MAX_DEPTH + 1);
	switch (v->type) {
	case JV_STRING:
		FUZZ_ASSERT(v->str);
		rewrite(v->str);
		break;
	case JV_OBJECT:
		for (size_t i = 0; i < v->n; i++) {
			FUZZ_ASSERT(v->keys[i]);
			FUZZ_ASSERT(jv_get(v, v->keys[i]));
		}
		/* fall through */
	case JV_ARRAY:
		for (size_t i = 0; i < v->n; i++)
			walk(&v->items[i], depth + 1);
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char err[128];
	size_t pos = 0;

	while (jv_more(text, size, &pos)) {
		size_t before = pos;
		struct jv v;

		if (jv_parse(text, size, &pos, &v, err, sizeof(err))) {
			FUZZ_ASSERT(err[0] && pos <= size);
			break;
		}
		FUZZ_ASSERT(pos > before && pos <= size);
		walk(&v, 0);
		jv_num(&v, 0);
		jv_str(&v);
		jv_array(&v);
		jv_free(&v);
	}
	return 0;
}
