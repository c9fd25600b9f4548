# SPDX-License-Identifier: GPL-2.0-or-later
# fuzz.mk - the libFuzzer harnesses, built by `make fuzz` (GNU make).
#
# The agent's parsers are compiled again with clang, coverage and
# sanitizers, into this folder (build/fuzz/ of a build tree), apart from
# the normal gcc build.  The top Makefile passes:
#   top_srcdir    the source tree
#   CLANG         clang (the one configure found for the BPF programs)
#   FUZZ_CPPFLAGS the agent's preprocessor flags (include folders)
#   JT_VERSION    the package version
#   DEP_CFLAGS    the libraries' compile flags (pkg-config)
#   DEP_LIBS      the libraries to link

HARNESSES = config control spool chschema report chquery cgroup slurmq decode \
	json_read schema imds docker prices offer spot smklog tokscan rulebundle \
	topframe

# the agent modules the harnesses reach (and what those call)
AGENT = lib/log lib/util lib/json lib/json_read core/schema \
	core/cgroup_parse lib/config lib/control daemon/cloud/slurmq core/jobstate \
	core/jobs core/timesplit \
	daemon/collect/decode daemon/deliver/spool core/chschema core/store_sqlite \
	query/storeq query/report query/report_html query/report_signals \
	query/costq \
	query/chquery lib/http daemon/cloud/imds daemon/cloud/docker \
	cli/prices_import cli/spot_import core/cost core/prices query/tasks daemon/track/smklog \
	lib/tokscan lib/luapat lib/creds lib/fsperm lib/netaddr \
	core/rulebundle core/rules lib/shellwords core/proc_table core/record \
	core/chsql core/files query/filesq lib/sha256 query/topq query/squeueq \
	query/rightsize query/sizefit query/instances

SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
# config.c ands booleans on purpose (every copy is made, then checked)
FUZZ_CFLAGS = -g -O1 $(SAN) -Wall -Wextra -Wno-unused-parameter \
	-Wno-bitwise-instead-of-logical
AGENT_OBJS = $(AGENT:%=agent/%.o)
PROGS = $(HARNESSES:%=fuzz_%)

all: $(PROGS)

# libFuzzer's runtime is a separate Debian package from clang itself
check-runtime:
	@echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' \
		> conftest.c
	@$(CLANG) -fsanitize=fuzzer conftest.c -o conftest 2> conftest.err || \
		{ cat conftest.err >&2; \
		  echo "fuzz: $(CLANG) cannot link -fsanitize=fuzzer:" \
		       "install libFuzzer's runtime (Debian: apt-get install libclang-rt-dev)" >&2; \
		  rm -f conftest conftest.c conftest.err; exit 1; }
	@rm -f conftest conftest.c conftest.err
	@touch check-runtime

agent/%.o: $(top_srcdir)/agent/%.c check-runtime
	@mkdir -p $(dir $@)
	@echo "  CC (fuzz) $@"
	@$(CLANG) $(FUZZ_CPPFLAGS) -DJT_VERSION='"$(JT_VERSION)"' \
		$(DEP_CFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

# fuzz.mk too: the objects are intermediate (.SECONDARY), so a module added
# to AGENT in a built tree is made only when the library is made again
libjobtrace-fuzz.a: $(AGENT_OBJS) $(top_srcdir)/tests/fuzz/fuzz.mk
	@rm -f $@
	@ar cr $@ $(AGENT_OBJS)

fuzz_%: $(top_srcdir)/tests/fuzz/fuzz_%.c $(top_srcdir)/tests/fuzz/fuzz.h \
		libjobtrace-fuzz.a
	@echo "  CCLD (fuzz) $@"
	@$(CLANG) $(FUZZ_CPPFLAGS) -I$(top_srcdir)/tests/fuzz $(DEP_CFLAGS) \
		$(FUZZ_CFLAGS) -fsanitize=fuzzer $< libjobtrace-fuzz.a \
		$(DEP_LIBS) -lpthread -lm -o $@

clean:
	rm -rf agent libjobtrace-fuzz.a $(PROGS) check-runtime

.PHONY: all clean
.SECONDARY: $(AGENT_OBJS)

-include $(AGENT_OBJS:.o=.d)
