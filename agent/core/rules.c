// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rules.c - the Lua rules engine.
 *
 * Lua is untrusted input: every call goes through lua_pcall, the state has
 * a memory cap (our allocator) and every classification an instruction
 * budget (a count hook) and a deadline, checked by the count hook and by
 * the pattern functions (luapat.c: the count hook never runs inside a C
 * function).  The deadline is the agent thread's CPU time, so that a busy
 * node preempting the agent does not fail classifications, with a hard cap
 * of DEADLINE_WALL_FACTOR times it in wall-clock time.  The sandbox has no io, no os beyond time/clock,
 * no load/dofile/require and no string.dump, so no bytecode gets in.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "log.h"
#include "luapat.h"
#include "proc_table.h"
#include "record.h"
#include "rules.h"
#include "schema.h"
#include "shellwords.h"
#include "tokscan.h"
#include "util.h"

/* One default rule file compiled in (rules_builtin.h, made by make). */
struct rules_chunk {
	const char *name;
	const char *text;
};

#include "rules_builtin.h"

#define RULES_BUILTIN_N (sizeof(rules_builtin) / sizeof(rules_builtin[0]))

#define HOOK_EVERY 1000		/* instructions between budget checks */
#define LOAD_BUDGET_FACTOR 50	/* a file's top level may do this much more */
#define DEADLINE_WALL_FACTOR 4	/* wall-clock cap: this many deadlines */
#define LOAD_DEADLINE_FACTOR 400	/* a (re)load: files and self-tests together */
#define LOAD_DEADLINE_MIN_MS 2000
#define SELFTEST_DEADLINE_FACTOR 20	/* one self-test case */
#define MAX_FILES 256
#define ANC_SLOTS 64		/* ancestors' views kept between calls */

/* One loaded Lua state with its registered rules and self-tests. */
struct rstate {
	lua_State *L;
	size_t mem_used;
	size_t mem_cap;
	unsigned long budget;	/* instructions allowed in the current call */
	unsigned long used;
	int rules_ref;		/* registry: { {name=, fn=, where=}, ... } */
	int file_rules_ref;	/* registry: the file rules, the same way */
	int tests_ref;		/* registry: { {case=, where=}, ... } */
	int ro_meta_ref;	/* registry: metatable making p read-only */
	int lazy_meta_ref;	/* registry: metatable building p's tables on use */
	bool p_read;		/* a file rule read p (l_watch_index) */
	unsigned p_mask;	/* ... only these fields of it (fkeys) */
	struct path_cache *pc;	/* file rules' verdicts by path (path_get) */
	const struct rules_input *cur_in;	/* the call under way, or NULL */
	lua_Integer call;	/* number of the call under way */
	unsigned nfiles, nrules, nfile_rules;
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC; 0: none (setting up) */
	uint64_t deadline_len_ns;
	uint64_t cpu_start_ns;	/* the thread's CPU time when it was armed, or
				 * more (see arm_deadline) */
	uint64_t cpu_read_ns;	/* the thread's CPU time at the last read */
	uint64_t cpu_read_wall_ns;	/* CLOCK_MONOTONIC of that read */
	bool expired;		/* the deadline passed during this call */
	const char *deadline_msg;	/* the error raised when it passes */
	/* the budget or the deadline stopped this call: every pcall of the
	 * rules passes the error on, so none can catch it and go on */
	bool stopped;
	char stop_msg[128];
	const char *load_src;	/* "@FILE" of the file being loaded */
	unsigned registered;	/* what that file registered so far */
	struct anc_slot *anc;	/* ANC_SLOTS, allocated on first use */
	struct jt_job job_key;	/* the job whose p.job is job_ref */
	int job_ref;		/* registry: read-only p.job, or LUA_NOREF */
};

/*
 * An ancestor's read-only view, built once and reused while the process
 * is the same one, unchanged (its gen): the siblings of a storm or of a
 * pipeline's step share their parent and ancestors.
 */
struct anc_slot {
	const struct jt_proc *p;	/* NULL: empty */
	uint64_t start_ns;
	uint32_t pid, gen;
	int ref[2];		/* registry: without argv, with; LUA_NOREF */
};

struct rules {
	struct rules_limits lim;
	struct rstate *cur;
	bool builtin;		/* cur is the built-in rules standing in */
	struct rules_stats st;
	char exec_msg[128];	/* the error when a classification runs late */
	char load_msg[128];	/* the error when a (re)load runs late */
	char test_msg[128];	/* the error when a self-test case runs late */
};

static char lazy_call_key;	/* address used as a private table key */
static int l_lazy(lua_State *L);

/* Allocator with a cap: refusing memory makes Lua raise "not enough memory". */
static void *lalloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct rstate *rs = ud;
	size_t old = ptr ? osize : 0;

	if (nsize == 0) {
		free(ptr);
		rs->mem_used -= old;
		return NULL;
	}
	if (nsize > old && rs->mem_used + (nsize - old) > rs->mem_cap)
		return NULL;
	ptr = realloc(ptr, nsize);
	if (ptr)
		rs->mem_used = rs->mem_used - old + nsize;
	return ptr;
}

/* The rstate behind a lua_State. */
static struct rstate *state_of(lua_State *L)
{
	void *ud;

	lua_getallocf(L, &ud);
	return ud;
}

/*
 * Start the deadline: ms from now; msg, the error raised when it passes,
 * must outlive the call (r->exec_msg, r->load_msg).
 *
 * The thread's CPU clock is a system call (0.56-0.63 us a read,
 * `bench/stagecost 1000000 cputime`, a tenth of a classification), so a
 * classification does not always read it: it takes
 * the last reading, younger than one deadline, plus all the wall time
 * since, as if the thread had run all along.  That is the CPU time at the
 * start or more, so what the call is charged is what it used or less: a
 * rule is stopped after at least one deadline of its own CPU and at most
 * two (and at DEADLINE_WALL_FACTOR deadlines of wall time at the latest),
 * never early.  A (re)load (exact) always reads it.
 */
static void arm_deadline(struct rstate *rs, unsigned ms, const char *msg,
			 bool exact)
{
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);

	rs->deadline_len_ns = (uint64_t)ms * 1000000ull;
	rs->deadline_ns = now + rs->deadline_len_ns;
	if (exact || !rs->cpu_read_wall_ns ||
	    now - rs->cpu_read_wall_ns >= rs->deadline_len_ns) {
		rs->cpu_read_ns = util_now_ns(CLOCK_THREAD_CPUTIME_ID);
		rs->cpu_read_wall_ns = now;
	}
	rs->cpu_start_ns = rs->cpu_read_ns + (now - rs->cpu_read_wall_ns);
	rs->expired = false;
	rs->stopped = false;
	rs->deadline_msg = msg;
}

/*
 * Stop the call: raise msg with the place of the function at level (0:
 * the running one), and remember it, so that a pcall in the rules that
 * catches it raises it again (see l_pcall).
 */
static void raise_at(lua_State *L, int level, const char *msg)
{
	struct rstate *rs = state_of(L);

	luaL_where(L, level);
	lua_pushstring(L, msg);
	lua_concat(L, 2);
	if (!rs->stopped) {
		rs->stopped = true;
		util_strlcpy(rs->stop_msg, lua_tostring(L, -1),
			     sizeof(rs->stop_msg));
	}
	lua_error(L);
}

/*
 * Has the deadline passed?  Remembered for the rest of the call.  The
 * cheap wall clock first; past it, the thread's CPU time decides (the node
 * may have run others meanwhile), up to the wall-clock cap.
 */
static bool deadline_passed(struct rstate *rs)
{
	uint64_t now;

	if (rs->expired || !rs->deadline_ns)
		return rs->expired;
	now = util_now_ns(CLOCK_MONOTONIC);
	if (now < rs->deadline_ns)
		return false;
	if (now >= rs->deadline_ns +
		   (DEADLINE_WALL_FACTOR - 1) * rs->deadline_len_ns ||
	    (int64_t)(util_now_ns(CLOCK_THREAD_CPUTIME_ID) - rs->cpu_start_ns) >=
		    (int64_t)rs->deadline_len_ns)
		rs->expired = true;
	return rs->expired;
}

/* luapat's check: stop the pattern function past the deadline. */
static void deadline_check(lua_State *L, void *ud)
{
	struct rstate *rs = ud;

	if (deadline_passed(rs))
		raise_at(L, 1, rs->deadline_msg);	/* where the rule called it */
}

/* A call while a file loads: a function of an earlier file counts as a
 * registration (lib.add, lib.deny, lib.redact_option, ...). */
static void note_call(lua_State *L, struct rstate *rs, lua_Debug *ar)
{
	if (!rs->load_src || !lua_getinfo(L, "S", ar))
		return;
	if (!strcmp(ar->what, "Lua") && strcmp(ar->source, rs->load_src))
		rs->registered++;
}

/* Count hook: stop a rule past the instruction budget or the deadline. */
static void budget_hook(lua_State *L, lua_Debug *ar)
{
	struct rstate *rs = state_of(L);

	if (ar->event != LUA_HOOKCOUNT) {
		note_call(L, rs, ar);
		return;
	}
	rs->used += HOOK_EVERY;
	if (rs->used > rs->budget) {
		char msg[96];

		snprintf(msg, sizeof(msg), "instruction budget of %lu exceeded (endless loop?)",
			 rs->budget);
		raise_at(L, 0, msg);
	}
	if (deadline_passed(rs))
		raise_at(L, 0, rs->deadline_msg);
}

/* (name, fn) on the stack as entry { name, fn, where } of the list at
 * registry ref. */
static void register_rule(lua_State *L, int ref)
{
	const char *name = luaL_checkstring(L, 1);

	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
	lua_createtable(L, 0, 3);
	lua_pushstring(L, name);
	lua_setfield(L, -2, "name");
	lua_pushvalue(L, 2);
	lua_setfield(L, -2, "fn");
	luaL_where(L, 1);
	lua_setfield(L, -2, "where");
	lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
	state_of(L)->registered++;
}

/* jobtrace.rule(name, fn): register a rule. */
static int l_rule(lua_State *L)
{
	register_rule(L, state_of(L)->rules_ref);
	state_of(L)->nrules++;
	return 0;
}

/* jobtrace.file_rule(name, fn): register a rule on the paths a process
 * opened, fn(path, p) -> "keep", "drop", "hash", "ext" or nil. */
static int l_file_rule(lua_State *L)
{
	register_rule(L, state_of(L)->file_rules_ref);
	state_of(L)->nfile_rules++;
	return 0;
}

/* jobtrace.selftest{...}: register a case run after every load. */
static int l_selftest(lua_State *L)
{
	struct rstate *rs = state_of(L);

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "argv");
	if (!lua_istable(L, -1))
		luaL_error(L, "selftest needs an argv list");
	lua_pop(L, 1);
	lua_rawgeti(L, LUA_REGISTRYINDEX, rs->tests_ref);
	lua_createtable(L, 0, 2);
	lua_pushvalue(L, 1);
	lua_setfield(L, -2, "case");
	luaL_where(L, 1);
	lua_setfield(L, -2, "where");
	lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
	rs->registered++;
	return 0;
}

/* jobtrace.basename(path). */
static int l_basename(lua_State *L)
{
	lua_pushstring(L, util_basename(luaL_checkstring(L, 1)));
	return 1;
}

/* print(...) from a rule goes to the debug log. */
static int l_print(lua_State *L)
{
	luaL_Buffer b;
	int n = lua_gettop(L);

	luaL_buffinit(L, &b);
	for (int i = 1; i <= n; i++) {
		if (i > 1)
			luaL_addchar(&b, '\t');
		luaL_tolstring(L, i, NULL);
		luaL_addvalue(&b);
	}
	luaL_pushresult(&b);
	log_debug("rules: %s", lua_tostring(L, -1));
	return 0;
}

/* Writing to p is a mistake worth an error. */
static int l_readonly(lua_State *L)
{
	return luaL_error(L, "p is read-only (write to d instead)");
}

/* After a protected call: pass on a stop, else pcall's results. */
static int after_pcall(lua_State *L, int status, int first)
{
	struct rstate *rs = state_of(L);

	if (rs->stopped) {
		lua_pushstring(L, rs->stop_msg);
		return lua_error(L);
	}
	lua_pushboolean(L, status == LUA_OK);
	lua_insert(L, first);
	return lua_gettop(L) - first + 1;
}

/*
 * pcall(f, ...) that cannot catch the budget or the deadline: once either
 * stopped the call, the error goes on up to the engine, so a loop around
 * a pcall cannot run past them.
 */
static int l_pcall(lua_State *L)
{
	luaL_checkany(L, 1);
	return after_pcall(L, lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0), 1);
}

/*
 * xpcall's message handler around the rule's own: an error raised by the
 * count hook reaches the handler while Lua still has hooks off, where no
 * deadline could stop a loop in it; a stop therefore skips it.
 */
static int l_msgh(lua_State *L)
{
	if (state_of(L)->stopped)
		return 1;	/* the error as it is */
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, 1);
	return 1;
}

/* xpcall(f, msgh, ...), stopped like l_pcall. */
static int l_xpcall(lua_State *L)
{
	int n = lua_gettop(L);

	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_pushvalue(L, 2);
	lua_pushcclosure(L, l_msgh, 1);
	lua_replace(L, 2);	/* our handler around the rule's */
	lua_pushvalue(L, 1);	/* f */
	lua_copy(L, 2, 1);	/* the handler below it */
	lua_replace(L, 2);
	return after_pcall(L, lua_pcall(L, n - 2, LUA_MULTRET, 1), 2);
}

/*
 * setmetatable(t, mt) refusing a __gc: Lua runs finalizers with hooks off,
 * so neither the budget nor the deadline could stop one (a loop in it
 * would hang the agent at the next collection).
 */
static int l_setmetatable(lua_State *L)
{
	if (lua_istable(L, 2)) {
		lua_pushliteral(L, "__gc");
		if (lua_rawget(L, 2) != LUA_TNIL)
			return luaL_error(L, "setmetatable: __gc is not allowed in rules "
					  "(a finalizer runs where no deadline can stop it)");
		lua_pop(L, 1);
	}
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, 1);
	return 1;
}

/* Open only the safe libraries and add the jobtrace API. */
static void sandbox(lua_State *L, struct rstate *rs)
{
	static const luaL_Reg api[] = {
		{ "rule", l_rule },
		{ "file_rule", l_file_rule },
		{ "selftest", l_selftest },
		{ "basename", l_basename },
		{ "shell_words", shellwords_lua_words },
		{ "shell_span", shellwords_lua_span },
		{ NULL, NULL },
	};
	static const char *const unsafe[] = { "dofile", "loadfile", "load",
					      "collectgarbage", "require", NULL };

	luaL_requiref(L, "_G", luaopen_base, 1);
	luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
	luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
	luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
	luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
	lua_pop(L, 5);
	luaL_requiref(L, LUA_OSLIBNAME, luaopen_os, 0);
	/* os: time and clock only */
	lua_createtable(L, 0, 2);
	lua_getfield(L, -2, "time");
	lua_setfield(L, -2, "time");
	lua_getfield(L, -2, "clock");
	lua_setfield(L, -2, "clock");
	lua_setglobal(L, "os");
	lua_pop(L, 1);
	for (const char *const *u = unsafe; *u; u++) {
		lua_pushnil(L);
		lua_setglobal(L, *u);
	}
	lua_getglobal(L, LUA_STRLIBNAME);
	lua_pushnil(L);
	lua_setfield(L, -2, "dump");
	/* the same table is the strings' __index: s:find() is bounded too */
	luapat_install(L, -1, deadline_check, rs);
	lua_pop(L, 1);
	lua_pushcfunction(L, l_print);
	lua_setglobal(L, "print");
	lua_pushcfunction(L, l_pcall);
	lua_setglobal(L, "pcall");
	lua_pushcfunction(L, l_xpcall);
	lua_setglobal(L, "xpcall");
	lua_getglobal(L, "setmetatable");
	lua_pushcclosure(L, l_setmetatable, 1);
	lua_setglobal(L, "setmetatable");
	luaL_newlib(L, api);
	/* word sets and code literals for the redaction rules, bounded too */
	tokscan_install(L, -1, deadline_check, rs);
	lua_setglobal(L, "jobtrace");

	lua_newtable(L);
	rs->rules_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_newtable(L);
	rs->file_rules_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_newtable(L);
	rs->tests_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_createtable(L, 0, 3);
	lua_pushcfunction(L, l_readonly);
	lua_setfield(L, -2, "__newindex");
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "__metatable");
	rs->ro_meta_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, l_lazy);
	lua_setfield(L, -2, "__index");
	rs->lazy_meta_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

static void path_cache_free(struct path_cache *pc);

/* Free a state; accepts NULL. */
static void state_free(struct rstate *rs)
{
	if (!rs)
		return;
	if (rs->L)
		lua_close(rs->L);
	path_cache_free(rs->pc);
	free(rs->anc);
	free(rs);
}

/* A new sandboxed state with the limits of r. */
static struct rstate *state_new(const struct rules *r)
{
	struct rstate *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->mem_cap = r->lim.mem_bytes;
	rs->budget = r->lim.instructions;
	rs->job_ref = LUA_NOREF;
	rs->L = lua_newstate(lalloc, rs);
	if (!rs->L) {
		free(rs);
		return NULL;
	}
	lua_sethook(rs->L, budget_hook, LUA_MASKCOUNT, HOOK_EVERY);
	rs->budget = ~0ul;	/* setting up is ours, not the rules' */
	sandbox(rs->L, rs);
	return rs;
}

/* Push a list of the NUL-separated strings in buf (len bytes). */
static void push_argv(lua_State *L, const char *buf, size_t len)
{
	const char *a = buf, *end = buf + len;
	lua_Integer i = 1;

	lua_createtable(L, 8, 0);
	while (a && a < end) {
		size_t n = strnlen(a, end - a);

		lua_pushlstring(L, a, n);
		lua_rawseti(L, -2, i++);
		a += n + 1;
	}
}

/* Set t[key] = s (or "" when s is NULL) on the table at the top. */
static void set_str(lua_State *L, const char *key, const char *s)
{
	lua_pushstring(L, s ? s : "");
	lua_setfield(L, -2, key);
}

/* __len of a read-only proxy: its table's length. */
static int l_proxy_len(lua_State *L)
{
	lua_getmetatable(L, 1);
	lua_getfield(L, -1, "__index");
	lua_pushinteger(L, (lua_Integer)lua_rawlen(L, -1));
	return 1;
}

/* next over a proxy's table (its __pairs). */
static int l_proxy_next(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 2);
	if (lua_next(L, 1))
		return 2;
	lua_pushnil(L);
	return 1;
}

/* __pairs of a read-only proxy: pairs over its table. */
static int l_proxy_pairs(lua_State *L)
{
	lua_pushcfunction(L, l_proxy_next);
	lua_getmetatable(L, 1);
	lua_getfield(L, -1, "__index");
	lua_remove(L, -2);
	lua_pushnil(L);
	return 3;
}

/* Replace the table at the top by a read-only proxy of it (reads, #,
 * pairs and ipairs go through; writes raise an error). */
static void push_readonly(lua_State *L)
{
	static const luaL_Reg meta[] = {
		{ "__newindex", l_readonly },
		{ "__len", l_proxy_len },
		{ "__pairs", l_proxy_pairs },
		{ NULL, NULL },
	};

	lua_createtable(L, 0, 0);
	lua_createtable(L, 0, 5);
	lua_pushvalue(L, -3);
	lua_setfield(L, -2, "__index");
	luaL_setfuncs(L, meta, 0);
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "__metatable");
	lua_setmetatable(L, -2);
	lua_remove(L, -2);
}

/* Push {exe, comm, tool} (and argv when with_argv) of an ancestor, read
 * only (its view may serve later calls). */
static void push_ancestor(lua_State *L, const struct jt_proc *a, bool with_argv)
{
	lua_createtable(L, 0, 5);
	set_str(L, "exe", a->exe);
	set_str(L, "comm", a->comm);
	set_str(L, "tool", a->tool_name);
	lua_pushinteger(L, a->uid);
	lua_setfield(L, -2, "uid");
	if (with_argv) {
		push_argv(L, a->argv, a->argv_len);
		push_readonly(L);
		lua_setfield(L, -2, "argv");
	}
	push_readonly(L);
}

/* Push an ancestor's view: from the slots when the input allows it (see
 * struct anc_slot), else built for this call. */
static void push_ancestor_view(lua_State *L, struct rstate *rs,
			       const struct rules_input *in,
			       const struct jt_proc *a, bool with_argv)
{
	struct anc_slot *s;
	int w = with_argv;

	if (in->cached && !rs->anc) {
		rs->anc = calloc(ANC_SLOTS, sizeof(*rs->anc));
		for (size_t i = 0; rs->anc && i < ANC_SLOTS; i++)
			rs->anc[i].ref[0] = rs->anc[i].ref[1] = LUA_NOREF;
	}
	if (!in->cached || !rs->anc) {
		push_ancestor(L, a, with_argv);
		return;
	}
	s = &rs->anc[((uintptr_t)a / sizeof(*a)) % ANC_SLOTS];
	if (s->p != a || s->pid != a->pid || s->start_ns != a->start_ns ||
	    s->gen != a->gen) {
		luaL_unref(L, LUA_REGISTRYINDEX, s->ref[0]);
		luaL_unref(L, LUA_REGISTRYINDEX, s->ref[1]);
		s->ref[0] = s->ref[1] = LUA_NOREF;
		s->p = a;
		s->pid = a->pid;
		s->start_ns = a->start_ns;
		s->gen = a->gen;
	}
	if (s->ref[w] != LUA_NOREF) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref[w]);
		return;
	}
	push_ancestor(L, a, with_argv);
	lua_pushvalue(L, -1);
	s->ref[w] = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* Push p.job: the members of the records' job object, "" when unset;
 * reused read-only while the next process has the same job. */
static void push_job(lua_State *L, struct rstate *rs,
		     const struct rules_input *in)
{
	const struct sf_field *f = sf_job_fields;
	const struct jt_job *j = &in->p->job;
	struct sv v[V__N];

	if (in->cached && rs->job_ref != LUA_NOREF &&
	    !memcmp(j, &rs->job_key, sizeof(*j))) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, rs->job_ref);
		return;
	}
	record_job_fill(v, j);
	lua_createtable(L, 0, (int)sf_job_nfields);
	for (size_t i = 0; i < sf_job_nfields; i++, f++) {
		const struct sv *x = &v[f->slot];

		/* AWS Batch's members come from the job registry when a
		 * record is written: not the process's own */
		if (f->slot >= V_JOB_ATTEMPT && f->slot <= V_JOB_ECS_TASK_ARN)
			continue;
		if (x->st == SV_SET)
			lua_pushlstring(L, x->s, x->n);
		else
			lua_pushliteral(L, "");
		lua_setfield(L, -2, f->key);
	}
	push_readonly(L);
	if (!in->cached)
		return;
	luaL_unref(L, LUA_REGISTRYINDEX, rs->job_ref);
	lua_pushvalue(L, -1);
	rs->job_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	rs->job_key = *j;
}

/* __index of p's fields: build job, parent, ancestors and exe_system on
 * first use. */
static int l_lazy(lua_State *L)
{
	struct rstate *rs = state_of(L);
	const struct rules_input *in = rs->cur_in;
	const char *k = lua_tostring(L, 2);
	lua_Integer call;

	lua_pushlightuserdata(L, &lazy_call_key);
	lua_rawget(L, 1);
	call = lua_tointeger(L, -1);
	lua_pop(L, 1);
	/* a p kept from an earlier call has nothing more to give */
	if (!k || !in || call != rs->call)
		return 0;
	if (!strcmp(k, "job")) {
		push_job(L, rs, in);
	} else if (!strcmp(k, "parent")) {
		if (!in->nanc)
			return 0;
		push_ancestor_view(L, rs, in, in->anc[0], true);
	} else if (!strcmp(k, "exe_system")) {
		const struct jt_proc *p = in->p;

		lua_pushboolean(L, (p->state & JT_PS_EXE_SYSTEM) ||
				((p->state & JT_PS_EXE_CHECK) && in->exe_check &&
				 in->exe_check(p)));
	} else if (!strcmp(k, "ancestors")) {
		lua_createtable(L, (int)in->nanc, 0);
		for (size_t i = 0; i < in->nanc; i++) {
			push_ancestor_view(L, rs, in, in->anc[i], false);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
	} else if (!strcmp(k, "engine_job")) {
		if (!in->engine_job)
			return 0;
		lua_createtable(L, 0, 4);
		set_str(L, "rule", in->engine_job->rule);
		set_str(L, "jobid", in->engine_job->jobid);
		set_str(L, "wildcards", in->engine_job->wildcards);
		set_str(L, "run", in->engine_job->run);
	} else {
		return 0;
	}
	lua_pushvalue(L, 2);
	lua_pushvalue(L, -2);
	lua_rawset(L, 1);	/* built once per call */
	return 1;
}

/* Push the read-only view p of a process. */
static void push_proc(lua_State *L, struct rstate *rs,
		      const struct rules_input *in)
{
	const struct jt_proc *p = in->p;

	lua_createtable(L, 0, 1);	/* the proxy */
	lua_createtable(L, 0, 12);	/* the real fields */
	lua_pushinteger(L, p->pid);
	lua_setfield(L, -2, "pid");
	lua_pushinteger(L, p->ppid);
	lua_setfield(L, -2, "ppid");
	lua_pushinteger(L, p->uid);
	lua_setfield(L, -2, "uid");
	set_str(L, "exe", p->exe);
	set_str(L, "comm", p->comm);
	set_str(L, "cgroup", p->cgroup);
	set_str(L, "container", p->container);
	push_argv(L, p->argv, p->argv_len);
	lua_setfield(L, -2, "argv");
	lua_pushboolean(L, (p->state & JT_PS_ARGV_TRUNC) != 0);
	lua_setfield(L, -2, "argv_truncated");
	/* job, parent and ancestors are built only if a rule reads them */
	lua_pushlightuserdata(L, &lazy_call_key);
	lua_pushinteger(L, ++rs->call);
	lua_rawset(L, -3);
	lua_rawgeti(L, LUA_REGISTRYINDEX, rs->lazy_meta_ref);
	lua_setmetatable(L, -2);
	/* proxy: reads go to the fields, writes raise an error */
	lua_rawgeti(L, LUA_REGISTRYINDEX, rs->ro_meta_ref);
	lua_pushvalue(L, -2);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -3);
	lua_pop(L, 1);
}

/* Push the decision table d with its defaults. */
static void push_decision(lua_State *L, const struct jt_proc *p)
{
	lua_createtable(L, 0, 12);
	lua_pushboolean(L, 1);
	lua_setfield(L, -2, "include");
	{
		const char *t = proc_default_tool(p);

		/* the same limit the rules must keep to */
		lua_pushlstring(L, t, strnlen(t, JT_STR_SMALL - 1));
		lua_setfield(L, -2, "tool");
	}
	set_str(L, "category", "");
	set_str(L, "version", "");
	set_str(L, "step", "");
	set_str(L, "run", "");
	set_str(L, "pipeline", "");
	set_str(L, "task", "");
	set_str(L, "cost_center", "");
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "stop");
	push_argv(L, p->argv, p->argv_len);
	lua_setfield(L, -2, "argv");
}

/* A string field of d and its length limit. */
struct dfield {
	const char *key;
	size_t max;
};

static const struct dfield dstr[] = {
	{ "tool", JT_STR_SMALL - 1 },     { "category", 31 },
	{ "version", 31 },                { "step", JT_STR_MEDIUM - 1 },
	{ "run", JT_STR_MEDIUM - 1 },     { "pipeline", JT_STR_MEDIUM - 1 },
	{ "task", JT_STR_MEDIUM - 1 },     { "cost_center", JT_STR_SMALL - 1 },
};

/* Check d's scalar fields (at index di); returns NULL or what is wrong. */
static const char *check_scalars(lua_State *L, int di, char *why, size_t len)
{
	int t;

	lua_getfield(L, di, "include");
	t = lua_type(L, -1);
	lua_pop(L, 1);
	if (t != LUA_TBOOLEAN) {
		snprintf(why, len, "d.include must be a boolean, not a %s",
			 lua_typename(L, t));
		return why;
	}
	lua_getfield(L, di, "children");
	t = lua_type(L, -1);
	lua_pop(L, 1);
	if (t != LUA_TBOOLEAN && t != LUA_TNIL) {
		snprintf(why, len, "d.children must be a boolean or nil, not a %s",
			 lua_typename(L, t));
		return why;
	}
	for (size_t i = 0; i < sizeof(dstr) / sizeof(dstr[0]); i++) {
		size_t n;

		lua_getfield(L, di, dstr[i].key);
		t = lua_type(L, -1);
		n = t == LUA_TSTRING ? lua_rawlen(L, -1) : 0;
		lua_pop(L, 1);
		if (t != LUA_TSTRING) {
			snprintf(why, len, "d.%s must be a string, not a %s",
				 dstr[i].key, lua_typename(L, t));
			return why;
		}
		if (n > dstr[i].max) {
			snprintf(why, len, "d.%s is %zu bytes, at most %zu",
				 dstr[i].key, n, dstr[i].max);
			return why;
		}
	}
	return NULL;
}

/* Check d's argv (at index di); returns NULL or what is wrong. */
static const char *check_argv(lua_State *L, int di, char *why, size_t len)
{
	int t;

	lua_getfield(L, di, "argv");
	if (!lua_istable(L, -1)) {
		snprintf(why, len, "d.argv must be a list of strings, not a %s",
			 luaL_typename(L, -1));
		lua_pop(L, 1);
		return why;
	}
	for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, -1); i <= n; i++) {
		t = lua_rawgeti(L, -1, i);
		lua_pop(L, 1);
		if (t != LUA_TSTRING) {
			snprintf(why, len, "d.argv[%lld] must be a string, not a %s",
				 (long long)i, lua_typename(L, t));
			lua_pop(L, 1);
			return why;
		}
	}
	lua_pop(L, 1);
	return NULL;
}

/* Check all of d (at index di); returns NULL or what is wrong. */
static const char *check_decision(lua_State *L, int di, char *why, size_t len)
{
	const char *bad = check_scalars(L, di, why, len);

	return bad ? bad : check_argv(L, di, why, len);
}

/* Record a rule's failure: log it (rate-limited) and keep the last one. */
static void rule_error(struct rules *r, const char *where, const char *name,
		       const char *msg)
{
	const char *pos = strstr(msg, ".lua:");
	/* Lua's own messages carry FILE:LINE; ours get the rule's place */
	bool located = pos && pos - msg < 256;

	r->st.runtime_errors++;
	snprintf(r->st.last_error, sizeof(r->st.last_error), "%s%s (rule '%s')",
		 located ? "" : where, msg, name);
	if (r->st.runtime_errors <= 10 || r->st.runtime_errors % 1000 == 0)
		log_warn("rules: %s (%llu rule errors so far)", r->st.last_error,
			 (unsigned long long)r->st.runtime_errors);
}

/* Report the failure of the rule whose entry { name, fn, where } is at idx. */
static void entry_error(struct rules *r, lua_State *L, int idx, const char *msg)
{
	idx = lua_absindex(L, idx);
	lua_getfield(L, idx, "where");
	lua_getfield(L, idx, "name");
	rule_error(r, lua_tostring(L, -2), lua_tostring(L, -1), msg);
	lua_pop(L, 2);
}

/* The error a failed call left at the top of the stack, copied into why. */
static const char *error_text(lua_State *L, char *why, size_t len)
{
	const char *msg = lua_tostring(L, -1);

	util_strlcpy(why, msg ? msg : "error object is not a string", len);
	return why;
}

/*
 * Run every rule on (p at pi, d at di) until one fails: it errors, runs out
 * of budget or time, or (check_each) leaves d invalid.  The failure is
 * reported and no later rule runs: the caller fails closed.  Returns the
 * number of failed rules (0 or 1).
 */
static unsigned run_chain(struct rules *r, struct rstate *rs, int pi, int di,
			  bool check_each)
{
	lua_State *L = rs->L;
	const void *argv_id;
	unsigned failed = 0;
	lua_Integer n;

	lua_rawgeti(L, LUA_REGISTRYINDEX, rs->rules_ref);
	n = (lua_Integer)lua_rawlen(L, -1);
	lua_getfield(L, di, "argv");
	argv_id = lua_topointer(L, -1);
	lua_pop(L, 1);
	rs->used = 0;
	rs->budget = r->lim.instructions;
	for (lua_Integer i = 1; i <= n && !failed; i++) {
		char why[384];
		const char *bad = NULL;

		lua_rawgeti(L, -1, i);			/* rule entry */
		lua_getfield(L, -1, "fn");
		lua_pushvalue(L, pi);
		lua_pushvalue(L, di);
		if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
			bad = error_text(L, why, sizeof(why));
			lua_pop(L, 1);
		} else if (rs->stopped || rs->expired) {
			/* it passed after the last hook ran */
			bad = rs->stopped ? rs->stop_msg : rs->deadline_msg;
		} else if (check_each) {
			/* only when diagnosing: which rule left d invalid?  argv
			 * is checked only when this rule replaced the whole list */
			bad = check_scalars(L, di, why, sizeof(why));
			lua_getfield(L, di, "argv");
			if (!bad && lua_topointer(L, -1) != argv_id)
				bad = check_argv(L, di, why, sizeof(why));
			argv_id = lua_topointer(L, -1);
			lua_pop(L, 1);
		}
		if (bad) {
			entry_error(r, L, -1, bad);
			failed++;
		} else {
			lua_getfield(L, di, "stop");
			if (lua_toboolean(L, -1))
				n = i;
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	rs->budget = ~0ul;
	return failed;
}

/* Copy the string field key of the table at di into out. */
static void get_str(lua_State *L, int di, const char *key, char *out,
		    size_t len)
{
	const char *s;

	lua_getfield(L, di, key);
	s = lua_tostring(L, -1);
	util_strlcpy(out, s ? s : "", len);
	lua_pop(L, 1);
}

/* Fill *d with the defaults for p. */
static void decision_defaults(const struct jt_proc *p, struct rules_decision *d)
{
	memset(d, 0, sizeof(*d));
	d->include = true;
	d->children = -1;
	util_strlcpy(d->tool, proc_default_tool(p), sizeof(d->tool));
}

/* Does the string list at ai hold exactly p's argv? */
static bool argv_same(lua_State *L, int ai, const struct jt_proc *p)
{
	const char *a = p->argv, *end = p->argv + p->argv_len;
	lua_Integer n = (lua_Integer)lua_rawlen(L, ai), i = 1;

	for (; a && a < end; i++) {
		size_t al = strnlen(a, end - a), sl;
		const char *s;
		bool eq;

		if (i > n)
			return false;
		lua_rawgeti(L, ai, i);
		s = lua_tolstring(L, -1, &sl);
		eq = s && sl == al && memcmp(s, a, al) == 0;
		lua_pop(L, 1);
		if (!eq)
			return false;
		a += al + 1;
	}
	return i - 1 == n;
}

/* Read the (checked) table at di into *d; argv only if it changed. */
static void read_decision(lua_State *L, int di, const struct jt_proc *p,
			  struct rules_decision *d)
{
	luaL_Buffer b;
	const char *s;
	size_t len;
	int ai;

	lua_getfield(L, di, "include");
	d->include = lua_toboolean(L, -1);
	lua_pop(L, 1);
	lua_getfield(L, di, "children");
	d->children = lua_isnil(L, -1) ? -1 : lua_toboolean(L, -1);
	lua_pop(L, 1);
	get_str(L, di, "tool", d->tool, sizeof(d->tool));
	get_str(L, di, "category", d->category, sizeof(d->category));
	get_str(L, di, "version", d->version, sizeof(d->version));
	get_str(L, di, "step", d->step, sizeof(d->step));
	get_str(L, di, "run", d->run, sizeof(d->run));
	get_str(L, di, "pipeline", d->pipeline, sizeof(d->pipeline));
	get_str(L, di, "task", d->task, sizeof(d->task));
	get_str(L, di, "cost_center", d->cost_center, sizeof(d->cost_center));

	lua_getfield(L, di, "argv");
	ai = lua_gettop(L);
	if (argv_same(L, ai, p)) {
		lua_pop(L, 1);
		return;
	}
	luaL_buffinit(L, &b);
	for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, ai); i <= n; i++) {
		lua_rawgeti(L, ai, i);
		luaL_addvalue(&b);
		luaL_addchar(&b, '\0');
	}
	luaL_pushresult(&b);
	s = lua_tolstring(L, -1, &len);
	if (len != p->argv_len || !p->argv || memcmp(s, p->argv, len)) {
		d->argv = malloc(len + 1);
		if (d->argv) {
			memcpy(d->argv, s, len);
			d->argv[len] = '\0';
			d->argv_len = len;
		}
	}
	lua_pop(L, 2);
}

/* d's argv: p's argv[0], then [REDACTED] for every other argument. */
static void redact_args(const struct jt_proc *p, struct rules_decision *d)
{
	static const char red[] = "[REDACTED]";
	size_t first, n = 0;

	free(d->argv);
	d->argv = NULL;
	d->argv_len = 0;
	if (!p->argv || !p->argv_len)
		return;
	first = strnlen(p->argv, p->argv_len);
	for (size_t off = first + 1; off < p->argv_len;
	     off += strnlen(p->argv + off, p->argv_len - off) + 1)
		n++;
	d->argv = malloc(first + 1 + n * sizeof(red));
	if (!d->argv)
		return;	/* the tracker then records no argv at all */
	memcpy(d->argv, p->argv, first);
	d->argv[first] = '\0';
	d->argv_len = first + 1;
	for (size_t i = 0; i < n; i++) {
		memcpy(d->argv + d->argv_len, red, sizeof(red));
		d->argv_len += sizeof(red);
	}
}

/* A failed classification: default tool, argv[0] and [REDACTED] for the rest. */
static void fail_closed(struct rules *r, const struct jt_proc *p,
			struct rules_decision *d)
{
	unsigned errors = d->errors;

	rules_decision_free(d);
	decision_defaults(p, d);
	d->errors = errors;
	d->failed_closed = true;
	r->st.failed_closed++;
	redact_args(p, d);
}

/* Run the chain for one input in state rs and fill *d. */
static void classify_in(struct rules *r, struct rstate *rs,
			const struct rules_input *in, struct rules_decision *d)
{
	lua_State *L = rs->L;
	int top = lua_gettop(L);
	char why[160];
	const char *bad;

	decision_defaults(in->p, d);
	if (!lua_checkstack(L, 16)) {
		d->errors = 1;
		fail_closed(r, in->p, d);
		return;
	}
	rs->cur_in = in;
	push_proc(L, rs, in);
	push_decision(L, in->p);
	d->errors = run_chain(r, rs, top + 1, top + 2, false);
	bad = d->errors ? NULL : check_decision(L, top + 2, why, sizeof(why));
	if (!d->errors && !bad) {
		read_decision(L, top + 2, in->p, d);
	} else if (bad) {
		/* rare: run again, checking after every rule, to name the
		 * rule that left d invalid; a classification (not a self-test
		 * of a candidate state, which is not yet r->cur) gets its
		 * deadline anew */
		if (rs == r->cur)
			arm_deadline(rs, r->lim.deadline_ms, r->exec_msg, false);
		lua_settop(L, top + 1);
		push_decision(L, in->p);
		d->errors = run_chain(r, rs, top + 1, top + 2, true);
		if (!d->errors) {
			/* an argv element changed in place */
			rule_error(r, "", "(the rules)", bad);
			d->errors++;
		}
	}
	rs->cur_in = NULL;
	lua_settop(L, top);
	if (d->errors) {
		fail_closed(r, in->p, d);
		lua_gc(L, LUA_GCCOLLECT);	/* a memory bomb leaves garbage */
	}
}

/* Run the rules on one process. */
void rules_classify(struct rules *r, const struct rules_input *in,
		    struct rules_decision *d)
{
	r->st.calls++;
	if (!r->cur) {
		/* no rules, so no redaction: nothing past argv[0] is kept */
		decision_defaults(in->p, d);
		fail_closed(r, in->p, d);
		return;
	}
	arm_deadline(r->cur, r->lim.deadline_ms, r->exec_msg, false);
	classify_in(r, r->cur, in, d);
	r->cur->deadline_ns = 0;
	if (r->builtin && d->include && !d->failed_closed) {
		/* the site's rules did not load, and with them what they
		 * redact: the built-in rules name the tool, the arguments are
		 * withheld until the site's rules load */
		redact_args(in->p, d);
		r->st.args_withheld++;
	}
}

/*
 * The file rules' verdicts, for every process until the rules reload:
 * most processes open the same libraries, caches and logs, and a rule
 * gives the same answer for the same path and the same fields of p.  A
 * path's entry says which of p's scalar fields (fkeys) the rules read for
 * it (mask; 0: the path alone decided, the entry holds the verdict); the
 * verdict is then kept under the path and those fields' values, a key
 * with '\0' between its parts.  A deterministic rule that saw the same
 * values took the same branches, so any entry found is its answer.  Open
 * addressing; emptied when it fills.
 */
#define PATH_CACHE_SLOTS 8192	/* a power of two */
#define PATH_CACHE_MAX (PATH_CACHE_SLOTS / 2)
#define PATH_KEY_MAX (JT_PATH_MAX + 1024)

struct path_cache {
	char *key[PATH_CACHE_SLOTS];
	uint32_t klen[PATH_CACHE_SLOTS];
	unsigned char verdict[PATH_CACHE_SLOTS];
	unsigned char mask[PATH_CACHE_SLOTS];
	size_t n;
};

/* The fields of p a file rule may read and still be cached (fkey_of). */
static const char *const fkeys[] = { "exe", "comm", "cgroup", "container",
				     "uid" };

/* The bit of fkeys for the field named k, or 0. */
static unsigned fkey_of(const char *k)
{
	for (size_t i = 0; i < sizeof(fkeys) / sizeof(fkeys[0]); i++)
		if (!strcmp(k, fkeys[i]))
			return 1u << i;
	return 0;
}

/* The value of fkeys[i] for p, as the rules see it, into buf. */
static const char *fkey_val(const struct jt_proc *p, size_t i, char *buf,
			    size_t len)
{
	const char *v[] = { p->exe, p->comm, p->cgroup, p->container };

	if (i < sizeof(v) / sizeof(v[0]))
		return v[i] ? v[i] : "";
	snprintf(buf, len, "%u", (unsigned)p->uid);
	return buf;
}

/* The key of path under mask for p into key (PATH_KEY_MAX): its length,
 * 0 when it does not fit. */
static size_t path_key(const char *path, unsigned mask,
		       const struct jt_proc *p, char *key)
{
	size_t n = strlen(path) + 1, l;
	char num[16];

	if (n > PATH_KEY_MAX)
		return 0;
	memcpy(key, path, n);
	for (size_t i = 0; mask && i < sizeof(fkeys) / sizeof(fkeys[0]); i++) {
		const char *v;

		if (!(mask & (1u << i)))
			continue;
		v = fkey_val(p, i, num, sizeof(num));
		l = strlen(v) + 1;
		if (n + l > PATH_KEY_MAX)
			return 0;
		memcpy(key + n, v, l);
		n += l;
	}
	return mask ? n : n - 1;
}

/* FNV-1a of a key. */
static uint32_t path_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* Free a cache; accepts NULL. */
static void path_cache_free(struct path_cache *pc)
{
	if (!pc)
		return;
	for (size_t i = 0; i < PATH_CACHE_SLOTS; i++)
		free(pc->key[i]);
	free(pc);
}

/* The slot of key (n bytes) in pc: where it is, or the empty one it would
 * go to. */
static size_t path_slot(const struct path_cache *pc, const char *key,
			size_t n)
{
	size_t i = path_hash(key, n) & (PATH_CACHE_SLOTS - 1);

	while (pc->key[i] && (pc->klen[i] != n || memcmp(pc->key[i], key, n)))
		i = (i + 1) & (PATH_CACHE_SLOTS - 1);
	return i;
}

/* The cached verdict on path for p into *v; false when there is none. */
static bool path_get(const struct rstate *rs, const char *path,
		     const struct jt_proc *p, enum rules_file_verdict *v)
{
	char key[PATH_KEY_MAX];
	size_t i, n = strlen(path);

	if (!rs->pc)
		return false;
	i = path_slot(rs->pc, path, n);
	if (rs->pc->key[i] && rs->pc->mask[i]) {
		n = path_key(path, rs->pc->mask[i], p, key);
		if (!n)
			return false;
		i = path_slot(rs->pc, key, n);
	}
	if (!rs->pc->key[i])
		return false;
	*v = (enum rules_file_verdict)rs->pc->verdict[i];
	return true;
}

/* Set key (n bytes) in pc to verdict v and mask (memory short: not kept). */
static void path_set(struct path_cache *pc, const char *key, size_t n,
		     enum rules_file_verdict v, unsigned mask)
{
	size_t i = path_slot(pc, key, n);

	if (!pc->key[i]) {
		if (!(pc->key[i] = malloc(n ? n : 1)))
			return;
		memcpy(pc->key[i], key, n);
		pc->klen[i] = (uint32_t)n;
		pc->n++;
	}
	pc->verdict[i] = (unsigned char)v;
	pc->mask[i] = (unsigned char)mask;
}

/* Remember the verdict on path for p, given after reading the fields in
 * mask of p. */
static void path_put(struct rstate *rs, const char *path, unsigned mask,
		     const struct jt_proc *p, enum rules_file_verdict v)
{
	char key[PATH_KEY_MAX];
	size_t n = 0;

	if (mask && !(n = path_key(path, mask, p, key)))
		return;
	if (!rs->pc && !(rs->pc = calloc(1, sizeof(*rs->pc))))
		return;
	if (rs->pc->n + 2 > PATH_CACHE_MAX) {
		for (size_t i = 0; i < PATH_CACHE_SLOTS; i++) {
			free(rs->pc->key[i]);
			rs->pc->key[i] = NULL;
		}
		rs->pc->n = 0;
	}
	path_set(rs->pc, path, strlen(path), v, mask);
	if (mask)
		path_set(rs->pc, key, n, v, 0);
}

/* p of a file rule (upvalue 1: the process's read-only view): a read of
 * a scalar field of fkeys is noted in p_mask (the verdict is cached under
 * its value), of any other marks the verdict as the process's own. */
static int l_watch_index(lua_State *L)
{
	struct rstate *rs = state_of(L);
	unsigned bit = lua_type(L, 2) == LUA_TSTRING ?
		       fkey_of(lua_tostring(L, 2)) : 0;

	if (bit)
		rs->p_mask |= bit;
	else
		rs->p_read = true;
	lua_pushvalue(L, 2);
	lua_gettable(L, lua_upvalueindex(1));
	return 1;
}

/* pairs(p) of a file rule: the same, and the view's pairs. */
static int l_watch_pairs(lua_State *L)
{
	state_of(L)->p_read = true;
	lua_getglobal(L, "next");
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_pushnil(L);
	return 3;
}

/* Wrap the view of p at the top in a table that notes reads of it. */
static void push_watched(lua_State *L)
{
	lua_newtable(L);			/* the watched p */
	lua_createtable(L, 0, 4);		/* its metatable */
	lua_pushvalue(L, -3);
	lua_pushcclosure(L, l_watch_index, 1);
	lua_setfield(L, -2, "__index");
	lua_pushvalue(L, -3);
	lua_pushcclosure(L, l_watch_pairs, 1);
	lua_setfield(L, -2, "__pairs");
	lua_pushcfunction(L, l_readonly);
	lua_setfield(L, -2, "__newindex");
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "__metatable");
	lua_setmetatable(L, -2);
	lua_remove(L, -2);
}

/* What a file rule may answer, in the order of enum rules_file_verdict. */
static const char *const file_verdicts[] = { "keep", "drop", "hash", "ext" };

/* The verdict named by the value at the top of the stack: 0 and *v set,
 * 1 for nil (no opinion), -1 for anything else. */
static int file_verdict_of(lua_State *L, enum rules_file_verdict *v)
{
	const char *s;

	if (lua_isnil(L, -1))
		return 1;
	s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
	for (size_t i = 0; s && i < 4; i++)
		if (!strcmp(s, file_verdicts[i])) {
			*v = (enum rules_file_verdict)i;
			return 0;
		}
	return -1;
}

/*
 * Run the file rules on path (p at pi): the first verdict decides, none is
 * keep.  A rule that fails, runs out of budget or time, or answers
 * something else drops the path (fail closed: a hash the rule did not get
 * to give must not leave the path in the clear); *failed counts it.
 */
static enum rules_file_verdict file_chain(struct rules *r, struct rstate *rs,
					  int pi, const char *path,
					  unsigned *failed)
{
	enum rules_file_verdict v = RULES_FILE_KEEP;
	lua_State *L = rs->L;
	bool decided = false;
	lua_Integer n;

	lua_rawgeti(L, LUA_REGISTRYINDEX, rs->file_rules_ref);
	n = (lua_Integer)lua_rawlen(L, -1);
	rs->used = 0;
	rs->budget = r->lim.instructions;
	for (lua_Integer i = 1; i <= n && !decided; i++) {
		char why[384];
		const char *bad = NULL;
		int k;

		lua_rawgeti(L, -1, i);			/* rule entry */
		lua_getfield(L, -1, "fn");
		lua_pushstring(L, path);
		lua_pushvalue(L, pi);
		if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
			bad = error_text(L, why, sizeof(why));
		} else if (rs->stopped || rs->expired) {
			bad = rs->stopped ? rs->stop_msg : rs->deadline_msg;
		} else if ((k = file_verdict_of(L, &v)) < 0) {
			snprintf(why, sizeof(why), "a file rule returned %s, not"
				 " \"keep\", \"drop\", \"hash\", \"ext\" or nil",
				 luaL_typename(L, -1));
			bad = why;
		} else {
			decided = k == 0;
		}
		lua_pop(L, 1);				/* result or error */
		if (bad) {
			entry_error(r, L, -1, bad);
			v = RULES_FILE_DROP;
			decided = true;
			(*failed)++;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	rs->budget = ~0ul;
	return v;
}

/*
 * The file rules of state rs on paths[0..n) of in->p, into out: a path
 * decided earlier without reading p has its verdict from the cache; p is
 * built only when a path needs the rules.
 */
static unsigned files_in(struct rules *r, struct rstate *rs,
			 const struct rules_input *in, const char *const *paths,
			 size_t n, enum rules_file_verdict *out)
{
	lua_State *L = rs->L;
	int top = lua_gettop(L);
	unsigned failed = 0;
	bool pushed = false;

	for (size_t i = 0; i < n; i++) {
		unsigned before = failed;

		if (path_get(rs, paths[i], in->p, &out[i]))
			continue;
		if (!pushed && !lua_checkstack(L, 16)) {
			out[i] = RULES_FILE_DROP;
			failed++;
			continue;
		}
		if (!pushed) {
			rs->cur_in = in;
			push_proc(L, rs, in);
			push_watched(L);
			pushed = true;
		}
		if (rs == r->cur)
			arm_deadline(rs, r->lim.deadline_ms, r->exec_msg, false);
		rs->p_read = false;
		rs->p_mask = 0;
		out[i] = file_chain(r, rs, top + 1, paths[i], &failed);
		if (!rs->p_read && failed == before)
			path_put(rs, paths[i], rs->p_mask, in->p, out[i]);
	}
	rs->cur_in = NULL;
	lua_settop(L, top);
	if (failed)
		lua_gc(L, LUA_GCCOLLECT);
	return failed;
}

/* Decide which of the paths a process opened are kept, and how. */
unsigned rules_files(struct rules *r, const struct rules_input *in,
		     const char *const *paths, size_t n,
		     enum rules_file_verdict *out)
{
	unsigned failed;

	if (!r || !r->cur) {
		/* no rules: no site has said which paths may be kept */
		for (size_t i = 0; i < n; i++)
			out[i] = RULES_FILE_DROP;
		return 0;
	}
	failed = files_in(r, r->cur, in, paths, n, out);
	r->cur->deadline_ns = 0;
	/* the built-in rules stand in for the site's, whose hashing did not
	 * load: a kept path keeps its extension only */
	for (size_t i = 0; r->builtin && i < n; i++)
		if (out[i] == RULES_FILE_KEEP)
			out[i] = RULES_FILE_EXT;
	return failed;
}

/* Change the deadline of later classifications. */
void rules_set_deadline(struct rules *r, unsigned ms)
{
	r->lim.deadline_ms = ms ? ms : RULES_DEADLINE_MS;
	snprintf(r->exec_msg, sizeof(r->exec_msg),
		 "deadline of %u ms per exec exceeded (rules.deadline_ms)",
		 r->lim.deadline_ms);
	snprintf(r->test_msg, sizeof(r->test_msg),
		 "deadline of %u ms for one self-test exceeded (%d x rules.deadline_ms)",
		 r->lim.deadline_ms * SELFTEST_DEADLINE_FACTOR,
		 SELFTEST_DEADLINE_FACTOR);
}

/* Release what a decision owns. */
void rules_decision_free(struct rules_decision *d)
{
	free(d->argv);
	d->argv = NULL;
	d->argv_len = 0;
}

/* Copy the string field key of the table at idx, or NULL if absent. */
static const char *opt_str(lua_State *L, int idx, const char *key)
{
	const char *s;

	lua_getfield(L, idx, key);
	s = lua_isstring(L, -1) ? lua_tostring(L, -1) : NULL;
	lua_pop(L, 1);
	return s;	/* still anchored in the table */
}

/* Flatten the string list field key of the table at idx into buf. */
static size_t opt_argv(lua_State *L, int idx, const char *key, char *buf,
		       size_t cap)
{
	size_t len = 0;

	lua_getfield(L, idx, key);
	if (lua_istable(L, -1)) {
		for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, -1); i <= n;
		     i++) {
			size_t sl;
			const char *s;

			lua_rawgeti(L, -1, i);
			s = lua_tolstring(L, -1, &sl);
			if (s && len + sl + 1 <= cap) {
				memcpy(buf + len, s, sl);
				len += sl;
				buf[len++] = '\0';
			}
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	return len;
}

/* A fake process for a self-test, built from the case table at idx. */
struct fake_proc {
	struct jt_proc p;
	char argv[4096];
	char exe[512];
	char cgroup[512];
};

/* Fill f from the table at idx (argv, exe, comm, tool, cgroup, job, uid,
 * system). */
static void fake_from(lua_State *L, int idx, struct fake_proc *f)
{
	const char *exe = opt_str(L, idx, "exe"), *s;

	memset(f, 0, sizeof(*f));
	f->p.argv = f->argv;
	f->p.argv_len = opt_argv(L, idx, "argv", f->argv, sizeof(f->argv));
	lua_getfield(L, idx, "argv_truncated");
	if (lua_toboolean(L, -1))
		f->p.state |= JT_PS_ARGV_TRUNC;
	lua_pop(L, 1);
	if (!exe && f->p.argv_len) {
		if (strchr(f->argv, '/'))
			exe = f->argv;
		else {
			snprintf(f->exe, sizeof(f->exe), "/usr/bin/%.*s",
				 (int)(sizeof(f->exe) - 10), f->argv);
			exe = f->exe;
		}
	}
	if (exe && exe != f->exe)
		util_strlcpy(f->exe, exe, sizeof(f->exe));
	f->p.exe = f->exe;
	s = opt_str(L, idx, "comm");
	util_strlcpy(f->p.comm, s ? s : util_basename(f->exe), sizeof(f->p.comm));
	s = opt_str(L, idx, "tool");
	util_strlcpy(f->p.tool_name, s ? s : util_basename(f->exe),
		     sizeof(f->p.tool_name));
	s = opt_str(L, idx, "cgroup");
	if (s) {
		util_strlcpy(f->cgroup, s, sizeof(f->cgroup));
		f->p.cgroup = f->cgroup;
	}
	s = opt_str(L, idx, "job");
	if (s)
		util_strlcpy(f->p.job.id, s, sizeof(f->p.job.id));
	lua_getfield(L, idx, "uid");
	f->p.uid = (uint32_t)lua_tointeger(L, -1);
	lua_pop(L, 1);
	/* a system daemon's binary unless the case says otherwise */
	lua_getfield(L, idx, "system");
	if (lua_isnil(L, -1) || lua_toboolean(L, -1))
		f->p.state |= JT_PS_EXE_SYSTEM;
	lua_pop(L, 1);
}

/* Compare one expected string; writes the mismatch into why. */
static bool expect_str(lua_State *L, int ei, const char *key, const char *got,
		       char *why, size_t len)
{
	const char *want = opt_str(L, ei, key);

	if (!want || strcmp(want, got) == 0)
		return true;
	snprintf(why, len, "%s is '%s', expected '%s'", key, got, want);
	return false;
}

/* A case's file = PATH: the file rules' verdict against expect.file. */
static const char *file_selftest(struct rules *r, struct rstate *rs,
				 const struct rules_input *in, lua_State *L,
				 int ci, int ei, char *why, size_t len)
{
	const char *path = opt_str(L, ci, "file");
	enum rules_file_verdict v;
	unsigned failed;

	failed = files_in(r, rs, in, &path, 1, &v);
	if (failed) {
		snprintf(why, len, "a file rule failed on %s: %s", path,
			 r->st.last_error);
		return why;
	}
	if (!lua_istable(L, ei) ||
	    expect_str(L, ei, "file", file_verdicts[v], why, len))
		return NULL;
	return why;
}

/* Run one self-test case (table at ci); returns NULL or what failed. */
static const char *run_selftest(struct rules *r, struct rstate *rs, int ci,
				char *why, size_t len)
{
	lua_State *L = rs->L;
	struct fake_proc *f = malloc(sizeof(*f) * 2);
	struct rules_input in = { 0 };
	struct rules_engine_job ej;
	struct rules_decision d;
	const char *bad = NULL;
	int ei;

	if (!f)
		return "out of memory";
	fake_from(L, ci, &f[0]);
	in.p = &f[0].p;
	lua_getfield(L, ci, "parent");
	if (lua_istable(L, -1)) {
		fake_from(L, lua_gettop(L), &f[1]);
		in.anc[0] = &f[1].p;
		in.nanc = 1;
	}
	lua_pop(L, 1);
	lua_getfield(L, ci, "engine_job");
	if (lua_istable(L, -1)) {
		int ji = lua_gettop(L);
		const char *v;

		memset(&ej, 0, sizeof(ej));
		if ((v = opt_str(L, ji, "rule")))
			util_strlcpy(ej.rule, v, sizeof(ej.rule));
		if ((v = opt_str(L, ji, "jobid")))
			util_strlcpy(ej.jobid, v, sizeof(ej.jobid));
		if ((v = opt_str(L, ji, "wildcards")))
			util_strlcpy(ej.wildcards, v, sizeof(ej.wildcards));
		if ((v = opt_str(L, ji, "run")))
			util_strlcpy(ej.run, v, sizeof(ej.run));
		in.engine_job = &ej;
	}
	lua_pop(L, 1);
	classify_in(r, rs, &in, &d);
	lua_getfield(L, ci, "expect");
	ei = lua_gettop(L);
	if (d.errors) {
		snprintf(why, len, "a rule failed on this case: %s", r->st.last_error);
		bad = why;
	} else if (opt_str(L, ci, "file")) {
		/* a file case: only the file rules' verdict is checked */
		bad = file_selftest(r, rs, &in, L, ci, ei, why, len);
	} else if (lua_istable(L, ei)) {
		lua_getfield(L, ei, "include");
		if (lua_isboolean(L, -1) && lua_toboolean(L, -1) != d.include) {
			snprintf(why, len, "include is %s, expected %s",
				 d.include ? "true" : "false",
				 d.include ? "false" : "true");
			bad = why;
		}
		lua_pop(L, 1);
		if (!bad &&
		    !(expect_str(L, ei, "tool", d.tool, why, len) &&
		      expect_str(L, ei, "category", d.category, why, len) &&
		      expect_str(L, ei, "version", d.version, why, len) &&
		      expect_str(L, ei, "step", d.step, why, len) &&
		      expect_str(L, ei, "run", d.run, why, len) &&
		      expect_str(L, ei, "pipeline", d.pipeline, why, len) &&
		      expect_str(L, ei, "task", d.task, why, len) &&
		      expect_str(L, ei, "cost_center", d.cost_center, why, len)))
			bad = why;
		if (!bad) {
			char want[4096];
			size_t wl;

			lua_getfield(L, ei, "argv");
			if (lua_istable(L, -1)) {
				const char *got = d.argv ? d.argv : in.p->argv;
				size_t gl = d.argv ? d.argv_len : in.p->argv_len;

				wl = opt_argv(L, ei, "argv", want, sizeof(want));
				if (wl != gl || memcmp(want, got, wl)) {
					snprintf(why, len, "argv differs from the expected one");
					bad = why;
				}
			}
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	rules_decision_free(&d);
	free(f);
	return bad;
}

/* Only regular *.lua files, in byte order of their names. */
static int lua_file(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 4 && e->d_name[0] != '.' && strcmp(e->d_name + n - 4, ".lua") == 0;
}

/* Byte order of names (not the locale's). */
static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* The rule files of dir, as loaded: their count or -errno. */
int rules_dir_files(const char *dir, struct dirent ***names)
{
	int n = scandir(dir, names, lua_file, by_name);

	return n < 0 ? -errno : n;
}

/* Number of globals: a file that adds one (a library) registers something. */
static size_t count_globals(lua_State *L)
{
	size_t n = 0;

	lua_pushglobaltable(L);
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		lua_pop(L, 1);
		n++;
	}
	lua_pop(L, 1);
	return n;
}

/*
 * Run one rule file in rs: its text (len bytes) when text is set, else the
 * file at path.  Returns 0 or -EINVAL with "PATH:LINE: what" in err.
 */
static int load_one(struct rules *r, struct rstate *rs, const char *path,
		    const char *text, size_t len, char *err, size_t errlen)
{
	lua_State *L = rs->L;
	char src[4100];
	size_t nglobals;
	int st;

	rs->used = 0;
	rs->budget = r->lim.instructions * LOAD_BUDGET_FACTOR;
	snprintf(src, sizeof(src), "@%s", path);
	rs->load_src = src;
	rs->registered = 0;
	nglobals = count_globals(L);
	st = text ? luaL_loadbufferx(L, text, len, src, "t")
		  : luaL_loadfilex(L, path, "t");
	if (st != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
		const char *m = lua_tostring(L, -1);

		/* libconfig-like "FILE:LINE: what"; Lua writes "FILE:LINE: what" too */
		snprintf(err, errlen, "%s", m ? m : "error object is not a string");
		if (m && strncmp(m, path, strlen(path)) != 0)
			snprintf(err, errlen, "%s: %s", path, m);
		lua_pop(L, 1);
		return -EINVAL;
	}
	if (!rs->registered && count_globals(L) == nglobals) {
		snprintf(err, errlen,
			 "%s: registers nothing (no jobtrace.rule, jobtrace.selftest, "
			 "call of an earlier file's function such as lib.add, or new global)",
			 path);
		return -EINVAL;
	}
	rs->nfiles++;
	return 0;
}

/*
 * Load the rule files into rs: every file of dir, or (dir NULL) the
 * built-in copies of the default files.  Returns 0 or -errno with err
 * filled.
 */
static int load_files(struct rules *r, struct rstate *rs, const char *dir,
		      char *err, size_t errlen)
{
	struct dirent **names = NULL;
	lua_State *L = rs->L;
	int n = 0, rc = 0;

	if (dir) {
		n = rules_dir_files(dir, &names);
		if (n < 0) {
			rc = n;
			snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
			return rc;
		}
		if (n > MAX_FILES) {
			snprintf(err, errlen, "%s: more than %d rule files", dir,
				 MAX_FILES);
			rc = -E2BIG;
			goto out;
		}
	}
	/* calls are watched while files load: see note_call() */
	lua_sethook(L, budget_hook, LUA_MASKCOUNT | LUA_MASKCALL, HOOK_EVERY);
	if (!dir) {
		for (size_t i = 0; !rc && i < RULES_BUILTIN_N; i++) {
			char path[128];

			snprintf(path, sizeof(path), "%s/%s", RULES_BUILTIN_DIR,
				 rules_builtin[i].name);
			rc = load_one(r, rs, path, rules_builtin[i].text,
				      strlen(rules_builtin[i].text), err, errlen);
		}
	}
	for (int i = 0; !rc && i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		rc = load_one(r, rs, path, NULL, 0, err, errlen);
	}
out:
	rs->budget = ~0ul;
	rs->load_src = NULL;
	lua_sethook(L, budget_hook, LUA_MASKCOUNT, HOOK_EVERY);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* Run every registered self-test; returns 0 or -EINVAL with err filled. */
static int run_selftests(struct rules *r, struct rstate *rs, char *err,
			 size_t errlen, unsigned *passed)
{
	lua_State *L = rs->L;
	uint64_t errs_before = r->st.runtime_errors;
	uint64_t closed_before = r->st.failed_closed;
	int rc = 0;

	lua_rawgeti(L, LUA_REGISTRYINDEX, rs->tests_ref);
	for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, -1); i <= n; i++) {
		char why[384];
		const char *bad;

		struct rstate load = *rs;	/* the load's deadline */

		lua_rawgeti(L, -1, i);
		lua_getfield(L, -1, "case");
		/* a case is a classification: it gets a classification's
		 * deadline (with room for a cold state), not the load's */
		arm_deadline(rs, r->lim.deadline_ms * SELFTEST_DEADLINE_FACTOR,
			     r->test_msg, true);
		bad = run_selftest(r, rs, lua_gettop(L), why, sizeof(why));
		rs->deadline_ns = load.deadline_ns;
		rs->deadline_len_ns = load.deadline_len_ns;
		rs->cpu_start_ns = load.cpu_start_ns;
		rs->deadline_msg = load.deadline_msg;
		rs->expired = rs->stopped = false;
		lua_pop(L, 1);
		if (!bad && deadline_passed(rs))
			bad = rs->deadline_msg;	/* the cases together */
		if (bad) {
			lua_getfield(L, -1, "where");
			snprintf(err, errlen, "%sself-test failed: %s",
				 lua_tostring(L, -1), bad);
			lua_pop(L, 2);
			rc = -EINVAL;
			break;
		}
		lua_pop(L, 1);
		(*passed)++;
	}
	lua_pop(L, 1);
	/* errors of a candidate state are not the running rules' errors */
	r->st.runtime_errors = errs_before;
	r->st.failed_closed = closed_before;
	return rc;
}

/* Build, check and swap in the rules of dir (NULL: the built-in ones). */
static int load_rules(struct rules *r, const char *dir, char *err,
		      size_t errlen)
{
	char last[sizeof(r->st.last_error)];
	struct rstate *rs;
	unsigned passed = 0;
	int rc;

	memcpy(last, r->st.last_error, sizeof(last));
	rs = state_new(r);
	if (!rs) {
		snprintf(err, errlen, "%s: cannot create a Lua state",
			 dir ? dir : RULES_BUILTIN_DIR);
		rc = -ENOMEM;
		goto fail;
	}
	{
		unsigned ms = r->lim.deadline_ms * LOAD_DEADLINE_FACTOR;

		if (ms < LOAD_DEADLINE_MIN_MS)
			ms = LOAD_DEADLINE_MIN_MS;
		snprintf(r->load_msg, sizeof(r->load_msg),
			 "deadline of %u ms for loading the rules and their self-tests "
			 "exceeded (%d x rules.deadline_ms, at least %d ms)",
			 ms, LOAD_DEADLINE_FACTOR, LOAD_DEADLINE_MIN_MS);
		arm_deadline(rs, ms, r->load_msg, true);
	}
	rc = load_files(r, rs, dir, err, errlen);
	if (rc)
		goto fail;
	if (rs->nrules == 0) {
		snprintf(err, errlen, "%s: no rules registered (no *.lua file calls jobtrace.rule)",
			 dir ? dir : RULES_BUILTIN_DIR);
		rc = -EINVAL;
		goto fail;
	}
	rc = run_selftests(r, rs, err, errlen, &passed);
	memcpy(r->st.last_error, last, sizeof(last));
	if (rc)
		goto fail;
	rs->deadline_ns = 0;
	lua_gc(rs->L, LUA_GCCOLLECT);
	state_free(r->cur);
	r->cur = rs;
	r->st.files = rs->nfiles;
	r->st.rules = rs->nrules;
	r->st.file_rules = rs->nfile_rules;
	r->st.selftests = passed;
	r->st.reloads_ok++;
	r->builtin = !dir;
	r->st.builtin = !dir;
	if (dir)	/* the built-in rules standing in keep the reason */
		r->st.load_error[0] = '\0';
	util_strlcpy(r->st.dir, dir ? dir : RULES_BUILTIN_DIR, sizeof(r->st.dir));
	return 0;
fail:
	state_free(rs);
	r->st.reloads_failed++;
	snprintf(r->st.last_error, sizeof(r->st.last_error), "%s", err);
	snprintf(r->st.load_error, sizeof(r->st.load_error), "%s", err);
	return rc;
}

/* Build, check and swap in the rules of dir. */
int rules_load_dir(struct rules *r, const char *dir, char *err, size_t errlen)
{
	return load_rules(r, dir, err, errlen);
}

/* Swap in the built-in copies of the default rules. */
int rules_load_builtin(struct rules *r, char *err, size_t errlen)
{
	return load_rules(r, NULL, err, errlen);
}

/* Create an engine with no rules loaded. */
int rules_new(const struct rules_limits *lim, struct rules **out)
{
	struct rules *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->lim = *lim;
	rules_set_deadline(r, lim->deadline_ms);
	*out = r;
	return 0;
}

/* Free the engine. */
void rules_free(struct rules *r)
{
	if (!r)
		return;
	state_free(r->cur);
	free(r);
}

/* Copy the engine's counters. */
void rules_get_stats(const struct rules *r, struct rules_stats *st)
{
	*st = r->st;
}
