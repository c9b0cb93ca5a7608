/*
 * Reader for callgrind output, written for the CFG soundness oracle (tests/oracle/cfg_oracle.c).
 *
 * What callgrind 3.19 writes with --dump-instr=yes --collect-jumps=yes --skip-plt=no, as
 * established on small gcc/clang/g++ programs (see tests/programs/) and relied on below:
 *
 *  - Header lines are "key: value". "positions: instr line" names the subpositions that start
 *    every cost line (an instruction address, then a source line); "events: Ir" names the
 *    counters that follow them. "summary:" (and "totals:" at the end) give the total of each
 *    event over the whole run; the self costs of all cost lines add up to exactly that, which
 *    the oracle uses as a self-check of this reader.
 *  - Specification lines are "key=value": ob= (object), fl=/fi=/fe= (file), fn= (function),
 *    cob=/cfi=/cfl=/cfn= (the callee of the next calls= line), jfi=/jfn= (file and function of
 *    the next jump's target), calls=, jump=, jcnd=.
 *  - Name compression: "(id) name" defines id, a later "(id)" alone refers to it. Objects
 *    (ob= and cob=) share one id space, files another, functions a third. A cob= may define an
 *    object id before any ob= uses it ("cob=(2) ???"). cob= and cfi= apply to the next calls=
 *    line only: a calls= without a cob= goes to the current ob=.
 *  - The ob= name of the main program is its path as valgrind resolved it (absolute). The
 *    addresses of an ob= that is an ELF file are ELF virtual addresses: the PIE load base is
 *    already removed. The .plt of the main program is NOT attributed to it: PLT stubs appear
 *    under an object named "???" with their run-time address (e.g. "cfn=... 0x109030 [PLT]").
 *  - Every subposition is absolute (0x-prefixed hex, or decimal), or relative to the same
 *    subposition of the last cost line ("+N", "-N"), or "*" (the same). Callgrind writes the
 *    relative form only when |diff| < 100. The target positions of calls=, jump= and jcnd=
 *    are compressed against the last cost line too and do not move it: consecutive jump=
 *    lines of one indirect jump are all relative to the jump's own address.
 *  - Costs may be left off at the end of a cost line; missing ones are zero.
 *  - "calls=COUNT TARGET" is followed by one cost line whose position is the call site (the
 *    calling instruction) and whose costs are the INCLUSIVE cost of the callee; the calling
 *    instruction's own execution is counted on its ordinary cost line. Inclusive lines must
 *    not be added to instruction counts.
 *  - "jump=COUNT TARGET" (unconditional) and "jcnd=TAKEN/EXECUTED TARGET" (conditional) are
 *    followed by one line that carries only the position of the jump's SOURCE, i.e. the jump
 *    instruction itself (in practice "*": the jump instruction's own cost line comes just
 *    before). For jcnd, EXECUTED is how often the jcc ran in that context and TAKEN how often
 *    it went to TARGET, so EXECUTED - TAKEN is the not-taken (fall-through) count. A jcc that
 *    was never taken gets no jcnd= line at all.
 *  - Fall-throughs are not written as jumps: neither a jcc's not-taken path nor the flow from
 *    one instruction to the next (also not across a basic-block boundary). A DIRECT jmp to
 *    the very next instruction is not written either (it looks like a fall-through), while an
 *    INDIRECT jmp that lands on the next instruction (a switch case placed right after the
 *    jmp *%rax) is a jump= line.
 *  - An indirect jump (jmp *%rax of a switch) gives one jump= line per target reached, all
 *    with the indirect jump as source.
 *  - A jump to the start of another function (a sibling call "jmp sq", an indirect
 *    "jmp *%rax" that leaves the function, a jmp into a NAME.cold part, which has a symbol)
 *    is written as calls=, not as jump=, when valgrind knows a symbol at the target; a jump
 *    to an address valgrind has no symbol for stays a jump= (crtstuff's frame_dummy ->
 *    register_tm_clones). Transfers between objects (ld.so entering _start, libc calling
 *    main or a qsort comparator) are calls= too; the site is then in the other object.
 *  - Returns are not recorded. Neither is the C++ unwinder's entry into a landing pad: the
 *    landing pad just has more executions than recorded jumps and calls into it.
 *  - A function can appear under several fn= contexts (recursion levels "name'2", a cold
 *    part reached by a jump staying in its caller's context, several parts): the same address
 *    then has several cost lines, which add up.
 *  - A rep-prefixed string instruction counts one Ir per iteration plus one (n + 1 for a
 *    count of n), and its iterations are written as jumps to itself (a "jump=1" and a
 *    "jcnd=n-1/n" from the instruction to itself).
 *
 * What is kept, for the one object asked for: the self Ir of each instruction (its execution
 * count), the jumps whose source is in the object, and the calls whose site or target is.
 */
#include "callgrind.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CG_MAX_POS 4
#define CG_MAX_EVENTS 64

enum pending {
	PEND_NONE,
	PEND_CALL,
	PEND_JUMP,
};

struct parser {
	struct cg_profile *prof;
	const char *name; /* file name for messages */
	unsigned long line;
	const char *object;

	int npos, instr_pos; /* subpositions per cost line; index of "instr" or -1 */
	bool have_positions;
	int nevents, ir_event; /* counters per cost line; index of "Ir" or -1 */
	bool have_events;
	uint64_t last[CG_MAX_POS];

	/* Object names by compression id; whether each matches the object asked for. */
	char **obj_names;
	size_t nobj_names;

	bool ob_in;     /* the current ob= is the object */
	bool cob_set, cob_in;
	uint64_t summary_ir, totals_ir;
	bool have_summary, have_totals;

	enum pending pend;
	uint64_t pend_count, pend_exec, pend_target;
	bool pend_target_in, pend_cond;

	size_t cap_insns, cap_jumps, cap_calls;
};

static int fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct parser *p, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->line)
		snprintf(p->prof->error, sizeof(p->prof->error), "%s:%lu: %s", p->name, p->line,
			 msg);
	else
		snprintf(p->prof->error, sizeof(p->prof->error), "%s: %s", p->name, msg);
	return -1;
}

static int grow(struct parser *p, void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;
	void *na;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 1024;
	na = realloc(*arr, ncap * elem);
	if (!na)
		return fail(p, "out of memory");
	*arr = na;
	*cap = ncap;
	return 0;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Reads one whitespace-separated token of S into TOK (NUL-terminated); returns the rest or
 * NULL at the end of the line. */
static const char *next_token(const char *s, char *tok, size_t toklen)
{
	size_t n = 0;

	s = skip_ws(s);
	if (!*s)
		return NULL;
	while (*s && *s != ' ' && *s != '\t') {
		if (n + 1 < toklen)
			tok[n++] = *s;
		s++;
	}
	tok[n] = '\0';
	return s;
}

/* An unsigned decimal or 0x-hex number filling the whole of TOK. */
static bool parse_u64(const char *tok, uint64_t *val)
{
	char *end;
	int base = 10;

	if (!*tok || *tok == '-' || *tok == '+' || *tok == ' ')
		return false;
	if (tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X'))
		base = 16;
	errno = 0;
	*val = strtoull(tok, &end, base);
	return !errno && *end == '\0' && end != tok;
}

/* One subposition token relative to LAST. */
static bool parse_subpos(const char *tok, uint64_t last, uint64_t *val)
{
	uint64_t d;

	if (!strcmp(tok, "*")) {
		*val = last;
		return true;
	}
	if (tok[0] == '+' || tok[0] == '-') {
		if (!parse_u64(tok + 1, &d))
			return false;
		*val = tok[0] == '+' ? last + d : last - d;
		return true;
	}
	return parse_u64(tok, val);
}

/* Parses the NPOS subpositions at the start of S into POS; returns the rest or NULL. */
static const char *parse_position(struct parser *p, const char *s, uint64_t *pos)
{
	char tok[64];
	int i;

	for (i = 0; i < p->npos; i++) {
		s = next_token(s, tok, sizeof(tok));
		if (!s) {
			fail(p, "expected %d position(s)", p->npos);
			return NULL;
		}
		if (!parse_subpos(tok, p->last[i], &pos[i])) {
			fail(p, "bad position '%s'", tok);
			return NULL;
		}
	}
	return s;
}

/* Splits a compressed name "(id) name", "(id)" or "name". *ID is -1 when uncompressed;
 * *NAME is NULL when only an id is given. */
static int parse_compressed(struct parser *p, const char *val, long *id, const char **name)
{
	char *end;

	val = skip_ws(val);
	*id = -1;
	*name = val;
	if (*val != '(')
		return 0;
	errno = 0;
	*id = strtol(val + 1, &end, 10);
	if (errno || end == val + 1 || *end != ')' || *id < 0 || *id > 10000000)
		return fail(p, "bad name compression '%s'", val);
	val = skip_ws(end + 1);
	*name = *val ? val : NULL;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool object_matches(const char *obname, const char *want)
{
	if (!strcmp(obname, want))
		return true;
	return !strcmp(base_name(obname), base_name(want)) && strcmp(obname, "???");
}

/* Resolves an ob=/cob= value to "is it the object asked for". */
static int resolve_object(struct parser *p, const char *val, bool *in)
{
	const char *name;
	long id;

	if (parse_compressed(p, val, &id, &name))
		return -1;
	if (id >= 0 && name) {
		if ((size_t)id >= p->nobj_names) {
			size_t n = (size_t)id + 16;
			char **nn = realloc(p->obj_names, n * sizeof(*nn));

			if (!nn)
				return fail(p, "out of memory");
			memset(nn + p->nobj_names, 0, (n - p->nobj_names) * sizeof(*nn));
			p->obj_names = nn;
			p->nobj_names = n;
		}
		free(p->obj_names[id]);
		p->obj_names[id] = strdup(name);
		if (!p->obj_names[id])
			return fail(p, "out of memory");
	} else if (id >= 0) {
		if ((size_t)id >= p->nobj_names || !p->obj_names[id])
			return fail(p, "object id (%ld) used before it is defined", id);
		name = p->obj_names[id];
	}
	*in = object_matches(name, p->object);
	if (*in && !p->prof->object) {
		p->prof->object = strdup(name);
		if (!p->prof->object)
			return fail(p, "out of memory");
	}
	return 0;
}

static int header_line(struct parser *p, const char *key, size_t keylen, const char *val)
{
	char tok[64];
	const char *s;
	int n;

	if (keylen == 9 && !memcmp(key, "positions", 9)) {
		p->npos = 0;
		p->instr_pos = -1;
		for (s = val; (s = next_token(s, tok, sizeof(tok)));) {
			if (p->npos == CG_MAX_POS)
				return fail(p, "too many positions");
			if (!strcmp(tok, "instr"))
				p->instr_pos = p->npos;
			else if (strcmp(tok, "line"))
				return fail(p, "unknown position '%s'", tok);
			p->npos++;
		}
		if (p->instr_pos < 0)
			return fail(p, "no instr position: run callgrind with --dump-instr=yes");
		p->have_positions = true;
		memset(p->last, 0, sizeof(p->last));
	} else if (keylen == 6 && !memcmp(key, "events", 6)) {
		p->nevents = 0;
		p->ir_event = -1;
		for (s = val; (s = next_token(s, tok, sizeof(tok)));) {
			if (p->nevents == CG_MAX_EVENTS)
				return fail(p, "too many events");
			if (!strcmp(tok, "Ir"))
				p->ir_event = p->nevents;
			p->nevents++;
		}
		if (p->ir_event < 0)
			return fail(p, "no Ir event");
		p->have_events = true;
	} else if ((keylen == 7 && !memcmp(key, "summary", 7)) ||
		   (keylen == 6 && !memcmp(key, "totals", 6))) {
		uint64_t v = 0;

		if (!p->have_events)
			return fail(p, "%.*s: before events:", (int)keylen, key);
		for (n = 0, s = val; n <= p->ir_event; n++) {
			s = next_token(s, tok, sizeof(tok));
			if (!s || !parse_u64(tok, &v))
				return fail(p, "bad %.*s: line", (int)keylen, key);
		}
		if (key[0] == 's') {
			p->summary_ir = v;
			p->have_summary = true;
		} else {
			p->totals_ir = v;
			p->have_totals = true;
		}
	} else if (keylen == 7 && !memcmp(key, "version", 7)) {
		if (strcmp(skip_ws(val), "1"))
			return fail(p, "unsupported format version '%s'", skip_ws(val));
	} else if (keylen == 4 && !memcmp(key, "part", 4)) {
		memset(p->last, 0, sizeof(p->last));
	}
	return 0;
}

/* calls=COUNT TARGET, jump=COUNT TARGET, jcnd=TAKEN/EXECUTED TARGET */
static int transfer_line(struct parser *p, const char *key, const char *val)
{
	uint64_t pos[CG_MAX_POS];
	char tok[64], *slash;
	const char *s;

	if (!p->have_positions || !p->have_events)
		return fail(p, "%s= before positions:/events:", key);
	if (p->pend != PEND_NONE)
		return fail(p, "%s= where a cost line was expected", key);
	s = next_token(val, tok, sizeof(tok));
	if (!s)
		return fail(p, "%s= without a count", key);
	p->pend_cond = false;
	if (!strcmp(key, "jcnd")) {
		slash = strchr(tok, '/');
		if (!slash)
			return fail(p, "jcnd= count '%s' is not TAKEN/EXECUTED", tok);
		*slash = '\0';
		if (!parse_u64(tok, &p->pend_count) || !parse_u64(slash + 1, &p->pend_exec))
			return fail(p, "bad jcnd= counts");
		if (p->pend_count > p->pend_exec)
			return fail(p, "jcnd= taken count above its execution count");
		p->pend_cond = true;
	} else {
		if (!parse_u64(tok, &p->pend_count))
			return fail(p, "bad %s= count '%s'", key, tok);
		p->pend_exec = p->pend_count;
	}
	s = parse_position(p, s, pos);
	if (!s)
		return -1;
	if (next_token(s, tok, sizeof(tok)))
		return fail(p, "trailing '%s' after %s= target", tok, key);
	p->pend_target = pos[p->instr_pos];
	if (key[0] == 'c') {
		p->pend = PEND_CALL;
		p->pend_target_in = p->cob_set ? p->cob_in : p->ob_in;
		p->cob_set = false;
	} else {
		p->pend = PEND_JUMP;
	}
	return 0;
}

static int spec_line(struct parser *p, const char *key, size_t keylen, const char *val)
{
	static const char *const names[] = { "fl", "fi", "fe", "fn", "cfi", "cfl", "cfn",
					     "jfi", "jfn" };
	char k[8];
	const char *name;
	size_t i;
	long id;

	if (keylen >= sizeof(k))
		return fail(p, "unknown specification '%.*s='", (int)keylen, key);
	memcpy(k, key, keylen);
	k[keylen] = '\0';
	if (!strcmp(k, "calls") || !strcmp(k, "jump") || !strcmp(k, "jcnd"))
		return transfer_line(p, k, val);
	if (p->pend != PEND_NONE && strcmp(k, "jfi") && strcmp(k, "jfn"))
		return fail(p, "%s= where a cost line was expected", k);
	if (!strcmp(k, "ob"))
		return resolve_object(p, val, &p->ob_in);
	if (!strcmp(k, "cob")) {
		p->cob_set = true;
		return resolve_object(p, val, &p->cob_in);
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(k, names[i]))
			return parse_compressed(p, val, &id, &name);
	return fail(p, "unknown specification '%s='", k);
}

static int cost_line(struct parser *p, const char *s)
{
	struct cg_profile *prof = p->prof;
	uint64_t pos[CG_MAX_POS], cost, ir = 0, addr;
	char tok[64];
	int i;

	if (!p->have_positions || !p->have_events)
		return fail(p, "cost line before positions:/events:");
	s = parse_position(p, s, pos);
	if (!s)
		return -1;
	for (i = 0; (s = next_token(s, tok, sizeof(tok))); i++) {
		if (i == p->nevents)
			return fail(p, "more costs than events");
		if (!parse_u64(tok, &cost))
			return fail(p, "bad cost '%s'", tok);
		if (i == p->ir_event)
			ir = cost;
	}
	memcpy(p->last, pos, sizeof(p->last));
	addr = pos[p->instr_pos];

	switch (p->pend) {
	case PEND_NONE:
		prof->total_ir += ir;
		if (p->ob_in && ir) {
			if (grow(p, (void **)&prof->insns, &p->cap_insns, prof->ninsns,
				 sizeof(*prof->insns)))
				return -1;
			prof->insns[prof->ninsns++] = (struct cg_insn){ addr, ir };
			prof->object_ir += ir;
		}
		break;
	case PEND_CALL:
		if ((p->ob_in || p->pend_target_in) && p->pend_count) {
			if (grow(p, (void **)&prof->calls, &p->cap_calls, prof->ncalls,
				 sizeof(*prof->calls)))
				return -1;
			prof->calls[prof->ncalls++] = (struct cg_call){
				.site = addr,
				.target = p->pend_target,
				.count = p->pend_count,
				.site_in = p->ob_in,
				.target_in = p->pend_target_in,
			};
		}
		break;
	case PEND_JUMP:
		if (p->ob_in) {
			if (grow(p, (void **)&prof->jumps, &p->cap_jumps, prof->njumps,
				 sizeof(*prof->jumps)))
				return -1;
			prof->jumps[prof->njumps++] = (struct cg_jump){
				.from = addr,
				.to = p->pend_target,
				.taken = p->pend_count,
				.executed = p->pend_exec,
				.cond = p->pend_cond,
			};
		}
		break;
	}
	p->pend = PEND_NONE;
	return 0;
}

static int parse_line(struct parser *p, const char *s)
{
	const char *k;

	s = skip_ws(s);
	if (!*s || *s == '#')
		return 0;
	if ((*s >= '0' && *s <= '9') || *s == '+' || *s == '-' || *s == '*')
		return cost_line(p, s);
	for (k = s; (*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || *k == '_' ||
		    (*k >= '0' && *k <= '9');
	     k++)
		;
	if (k == s)
		return fail(p, "unrecognised line");
	if (*k == ':')
		return header_line(p, s, k - s, k + 1);
	if (*k == '=')
		return spec_line(p, s, k - s, k + 1);
	return fail(p, "unrecognised line");
}

static int cmp_insn(const void *a, const void *b)
{
	const struct cg_insn *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_jump(const void *a, const void *b)
{
	const struct cg_jump *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return (int)x->cond - (int)y->cond;
}

static int cmp_call(const void *a, const void *b)
{
	const struct cg_call *x = a, *y = b;

	if (x->site_in != y->site_in)
		return (int)x->site_in - (int)y->site_in;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	if (x->target_in != y->target_in)
		return (int)x->target_in - (int)y->target_in;
	if (x->target != y->target)
		return x->target < y->target ? -1 : 1;
	return 0;
}

/* Sorts and merges duplicates (several contexts of one address). */
static void finish(struct cg_profile *prof)
{
	size_t i, n;

	qsort(prof->insns, prof->ninsns, sizeof(*prof->insns), cmp_insn);
	for (i = n = 0; i < prof->ninsns; i++) {
		if (n && prof->insns[n - 1].addr == prof->insns[i].addr)
			prof->insns[n - 1].count += prof->insns[i].count;
		else
			prof->insns[n++] = prof->insns[i];
	}
	prof->ninsns = n;

	qsort(prof->jumps, prof->njumps, sizeof(*prof->jumps), cmp_jump);
	for (i = n = 0; i < prof->njumps; i++) {
		if (n && !cmp_jump(&prof->jumps[n - 1], &prof->jumps[i])) {
			prof->jumps[n - 1].taken += prof->jumps[i].taken;
			prof->jumps[n - 1].executed += prof->jumps[i].executed;
		} else {
			prof->jumps[n++] = prof->jumps[i];
		}
	}
	prof->njumps = n;

	qsort(prof->calls, prof->ncalls, sizeof(*prof->calls), cmp_call);
	for (i = n = 0; i < prof->ncalls; i++) {
		if (n && !cmp_call(&prof->calls[n - 1], &prof->calls[i]))
			prof->calls[n - 1].count += prof->calls[i].count;
		else
			prof->calls[n++] = prof->calls[i];
	}
	prof->ncalls = n;
}

int cg_profile__parse(struct cg_profile *prof, const char *buf, size_t len, const char *name,
		      const char *object)
{
	struct parser p = { .prof = prof, .name = name, .object = object, .npos = 1,
			    .instr_pos = -1 };
	char *line = NULL;
	size_t linecap = 0, off = 0, n;
	int ret = 0;

	memset(prof, 0, sizeof(*prof));
	while (off < len) {
		const char *nl = memchr(buf + off, '\n', len - off);

		n = nl ? (size_t)(nl - (buf + off)) : len - off;
		p.line++;
		if (n + 1 > linecap) {
			char *nlb = realloc(line, n + 1);

			if (!nlb) {
				ret = fail(&p, "out of memory");
				break;
			}
			line = nlb;
			linecap = n + 1;
		}
		memcpy(line, buf + off, n);
		line[n] = '\0';
		off += n + 1;
		if (memchr(line, '\0', n)) {
			ret = fail(&p, "NUL byte in text");
			break;
		}
		while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
			line[--n] = '\0';
		ret = parse_line(&p, line);
		if (ret)
			break;
	}
	if (!ret && p.pend != PEND_NONE)
		ret = fail(&p, "file ends after a calls=/jump= line");
	if (!ret && !p.have_events)
		ret = fail(&p, "no events: header (not callgrind output?)");
	free(line);
	for (n = 0; n < p.nobj_names; n++)
		free(p.obj_names[n]);
	free(p.obj_names);
	if (ret) {
		char err[sizeof(prof->error)];

		memcpy(err, prof->error, sizeof(err));
		cg_profile__free(prof);
		memcpy(prof->error, err, sizeof(err));
		return -1;
	}
	prof->summary_ir = p.have_summary ? p.summary_ir : p.have_totals ? p.totals_ir : 0;
	prof->totals_ir = p.have_totals ? p.totals_ir : 0;
	finish(prof);
	return 0;
}

int cg_profile__add(struct cg_profile *dst, const struct cg_profile *src)
{
	void *a, *j, *c;

	a = realloc(dst->insns, (dst->ninsns + src->ninsns + 1) * sizeof(*dst->insns));
	if (a)
		dst->insns = a;
	j = realloc(dst->jumps, (dst->njumps + src->njumps + 1) * sizeof(*dst->jumps));
	if (j)
		dst->jumps = j;
	c = realloc(dst->calls, (dst->ncalls + src->ncalls + 1) * sizeof(*dst->calls));
	if (c)
		dst->calls = c;
	if (!a || !j || !c)
		return -1;
	memcpy(dst->insns + dst->ninsns, src->insns, src->ninsns * sizeof(*src->insns));
	dst->ninsns += src->ninsns;
	memcpy(dst->jumps + dst->njumps, src->jumps, src->njumps * sizeof(*src->jumps));
	dst->njumps += src->njumps;
	memcpy(dst->calls + dst->ncalls, src->calls, src->ncalls * sizeof(*src->calls));
	dst->ncalls += src->ncalls;
	dst->object_ir += src->object_ir;
	finish(dst);
	return 0;
}

int cg_profile__load(struct cg_profile *prof, const char *path, const char *object)
{
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f;
	int ret;

	memset(prof, 0, sizeof(*prof));
	f = fopen(path, "r");
	if (!f) {
		snprintf(prof->error, sizeof(prof->error), "%s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (cap - len < 65536) {
			char *nb = realloc(buf, cap ? cap * 2 : 1 << 20);

			if (!nb) {
				snprintf(prof->error, sizeof(prof->error), "%s: out of memory",
					 path);
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
			cap = cap ? cap * 2 : 1 << 20;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(prof->error, sizeof(prof->error), "%s: read error", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	ret = cg_profile__parse(prof, buf, len, path, object);
	free(buf);
	return ret;
}

void cg_profile__free(struct cg_profile *prof)
{
	free(prof->object);
	free(prof->insns);
	free(prof->jumps);
	free(prof->calls);
	memset(prof, 0, sizeof(*prof));
}

uint64_t cg_profile__count(const struct cg_profile *prof, uint64_t addr)
{
	size_t lo = 0, hi = prof->ninsns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (prof->insns[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < prof->ninsns && prof->insns[lo].addr == addr ? prof->insns[lo].count : 0;
}

long cg_profile__first_jump(const struct cg_profile *prof, uint64_t from)
{
	size_t lo = 0, hi = prof->njumps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (prof->jumps[mid].from < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < prof->njumps && prof->jumps[lo].from == from ? (long)lo : -1;
}

bool cg_profile__whole(const struct cg_profile *prof)
{
	return !prof->summary_ir || prof->summary_ir == prof->total_ir ||
	       (prof->totals_ir && prof->totals_ir == prof->total_ir);
}
