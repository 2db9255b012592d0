# vlsim — build, test, bench, run. See README.md.
#   make          build ./vlsim
#   make run      run the shipped default scenario
#   make test     unit + validation tests, then the same under ASan+UBSan
#   make bench    benchmark figures (events/s, customers/s)
#   make vlcalib  the calibration tool (calib/calib.mk; CUDA=1 for the GPU backend)
#   make validate the real pipeline against the simulator (calib/realpipe; ~7 min, not in test)
#   make deps     install missing Debian packages (apt-get when root)
#   make fuzz     libFuzzer on the scenario and calibration loaders (FUZZ_SECONDS=60 in all)
#   make install  PREFIX=/usr/local (and DESTDIR) for vlsim, vlcalib, scenarios, plots, man page

CC      ?= cc
SHELL   := /bin/bash
PKGS    := gsl yaml-0.1
DEBPKGS := libgsl-dev libyaml-dev libcriterion-dev libopenblas-dev libavcodec-dev libavutil-dev \
           gnuplot-nox pkg-config valgrind
SCENARIO ?= scenarios/default.yaml

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
BASEFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) -I. \
            $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
CFLAGS  ?= -O2 -g
LDLIBS  = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lgsl -lgslcblas -lyaml) -lpthread -lm
TESTLIBS = $(shell pkg-config --libs criterion 2>/dev/null || echo -lcriterion)

LIB_SRCS  := $(sort $(wildcard sim/*.c) $(filter-out models/vlsim.c,$(wildcard models/*.c)))
TEST_SRCS := $(sort $(wildcard tests/test_*.c))
BENCH_SRCS := $(sort $(wildcard tests/bench_*.c))

B := build/release
A := build/asan
# make MPI=1: the MPI build (models/sweep_mpi.c), ./vlsim-mpi from build/mpi
ifeq ($(MPI),1)
CC := mpicc
B := build/mpi
BASEFLAGS += -DVLSIM_MPI
endif
LIB_OBJS  = $(LIB_SRCS:%.c=$(B)/%.o)
TEST_OBJS = $(TEST_SRCS:%.c=$(B)/%.o)
ALIB_OBJS = $(LIB_SRCS:%.c=$(A)/%.o)
ATEST_OBJS = $(TEST_SRCS:%.c=$(A)/%.o)
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

PREFIX  ?= /usr/local
DESTDIR ?=

.PHONY: all deps run test test-unit test-asan bench clean valgrind install mpi-check fuzz fuzz-build fuzz-deps
all: $(if $(filter 1,$(MPI)),vlsim-mpi,vlsim)

vlsim: $(B)/models/vlsim.o $(B)/libvlsim.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

vlsim-mpi: $(B)/models/vlsim.o $(B)/libvlsim.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/libvlsim.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(A)/libvlsim.a: $(ALIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(A)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(SANFLAGS) -MMD -MP -c -o $@ $<

# calib/calib.mk (vlcalib, the calibration kernels) adds its own targets and
# may append archives to EXTRA_TEST_DEPS / EXTRA_ATEST_DEPS and link flags
# to EXTRA_LDLIBS, so that the one test binary covers calib/ too.
EXTRA_TEST_DEPS :=
EXTRA_ATEST_DEPS :=
EXTRA_LDLIBS :=
-include calib/calib.mk

$(B)/tests/run_tests: $(TEST_OBJS) $(EXTRA_TEST_DEPS) $(B)/libvlsim.a
	$(CC) $(CFLAGS) -o $@ $^ $(TESTLIBS) $(EXTRA_LDLIBS) $(LDLIBS)

$(A)/tests/run_tests: $(ATEST_OBJS) $(EXTRA_ATEST_DEPS) $(A)/libvlsim.a
	$(CC) $(SANFLAGS) -o $@ $^ $(TESTLIBS) $(EXTRA_LDLIBS) $(LDLIBS)

$(B)/tests/bench: $(BENCH_SRCS:%.c=$(B)/%.o) $(B)/libvlsim.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# Installs what is missing; prints the command when not root.
deps:
	@missing=""; \
	for p in $(PKGS) criterion openblas libavcodec libavutil; do pkg-config --exists $$p 2>/dev/null || missing=1; done; \
	command -v gnuplot >/dev/null 2>&1 || missing=1; \
	command -v valgrind >/dev/null 2>&1 || missing=1; \
	command -v pkg-config >/dev/null 2>&1 || missing=1; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make deps: installing $(DEBPKGS)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEBPKGS)) || exit 1; \
	  else \
	    echo "make deps: missing packages; run: sudo apt-get install -y $(DEBPKGS)"; exit 1; \
	  fi; \
	fi

# MPI sweeps: OpenMPI (installed here when root), ./vlsim and ./vlsim-mpi,
# then tests/mpi_check.sh (1 process vs mpirun -np 2: the same results.csv).
MPIDEBPKGS := libopenmpi-dev openmpi-bin
mpi-check: deps
	@if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make mpi-check: installing $(MPIDEBPKGS)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(MPIDEBPKGS)) || exit 1; \
	  else \
	    echo "make mpi-check: OpenMPI missing; run: sudo apt-get install -y $(MPIDEBPKGS)"; exit 1; \
	  fi; \
	fi
	@$(MAKE) --no-print-directory vlsim
	@$(MAKE) --no-print-directory MPI=1 vlsim-mpi
	tests/mpi_check.sh

run: deps
	@$(MAKE) --no-print-directory vlsim
	./vlsim run $(SCENARIO)

# Tests run from the repository root (they read scenarios/ and tests/data/).
test: deps
	@$(MAKE) --no-print-directory test-unit
	@$(MAKE) --no-print-directory test-asan

test-unit: vlsim vlcalib vlrealpipe cuda-check $(B)/tests/run_tests
	$(B)/tests/run_tests --jobs 2

# Criterion ignores a worker's sanitizer exit status, so the log is checked too:
# every leak counts but those wholly inside Criterion's runner (tests/asan-leaks.awk
# says why that is not an LSan suppression).
# The sanitized tests run with address-space randomisation off where the kernel
# allows it (setarch -R): ASan's start-up reserves its shadow memory at fixed
# addresses, and once in several thousand test processes a randomised layout made
# that reservation fail (ReserveShadowMemoryRange, 2026-12-01) — a failure of the
# sanitizer, not of a test.
NORAND := $(shell setarch $$(uname -m) -R true >/dev/null 2>&1 && echo "setarch $$(uname -m) -R")

test-asan: vlsim vlrealpipe $(A)/tests/run_tests
	@mkdir -p build
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 LSAN_OPTIONS=exitcode=0 \
	  $(NORAND) $(A)/tests/run_tests --jobs 2 2>&1 | tee build/asan.log; \
	  status=$${PIPESTATUS[0]}; \
	  if grep -qE 'ERROR: AddressSanitizer|runtime error:' build/asan.log; then \
	    echo "test-asan: sanitizer errors (see build/asan.log)"; exit 1; fi; \
	  if ! awk -f tests/asan-leaks.awk build/asan.log; then \
	    echo "test-asan: leaks (above; the stacks in build/asan.log)"; exit 1; fi; \
	  exit $$status

bench: deps
	@$(MAKE) --no-print-directory $(B)/tests/bench vlsim
	$(B)/tests/bench

valgrind: deps vlsim
	@for s in scenarios/*.yaml; do \
	  echo "valgrind: $$s"; \
	  valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=all \
	    ./vlsim run $$s --replications 2 --duration 50 --threads 1 >/dev/null || exit 1; \
	done

# ---- fuzzing: libFuzzer targets tests/fuzz_*.c (README "Fuzzing") ----------
# The library is rebuilt with clang under ASan+UBSan and coverage into
# build/fuzz/, and its calls to fopen are renamed to sandbox_fopen
# (tests/fuzz_sandbox.c: fuzzed paths open only the fixtures; libFuzzer's own
# files are untouched). make fuzz runs every target
# for its share of FUZZ_SECONDS on a copy of its committed seed corpus
# (tests/fuzz/corpus/NAME) with the YAML dictionary; a crash, leak, hang
# (-timeout) or failed check stops it with the reproducer in build/fuzz/.
FUZZ_SECONDS ?= 60
FUZZ_CC      := clang
FUZZDEBPKGS  := clang libclang-rt-14-dev
FZ           := build/fuzz
FUZZ_NAMES   := $(patsubst tests/fuzz_%.c,%,$(filter-out tests/fuzz_sandbox.c,$(wildcard tests/fuzz_*.c)))
FUZZ_SAN     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
FLIB_OBJS     = $(LIB_SRCS:%.c=$(FZ)/%.o)

$(FZ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(BASEFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

.PRECIOUS: $(FZ)/tests/%.o

$(FZ)/libvlsim.a: $(FLIB_OBJS)
	rm -f $@ && ar rcs $@ $^ && objcopy --redefine-sym fopen=sandbox_fopen $@

$(FZ)/fuzz_%: $(FZ)/tests/fuzz_%.o $(FZ)/tests/fuzz_sandbox.o $(FZ)/libvlsim.a
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzz-deps:
	@if ! command -v $(FUZZ_CC) >/dev/null 2>&1 || \
	    ! ls $$($(FUZZ_CC) -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-$$(uname -m).a >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make fuzz: installing $(FUZZDEBPKGS)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(FUZZDEBPKGS)) || exit 1; \
	  else \
	    echo "make fuzz: clang or libFuzzer missing; run: sudo apt-get install -y $(FUZZDEBPKGS)"; exit 1; \
	  fi; \
	fi

fuzz-build: fuzz-deps
	@$(MAKE) --no-print-directory $(FUZZ_NAMES:%=$(FZ)/fuzz_%)

fuzz: deps fuzz-build
	@n=$(words $(FUZZ_NAMES)); per=$$(( $(FUZZ_SECONDS) / n )); [ $$per -ge 1 ] || per=1; \
	for t in $(FUZZ_NAMES); do \
	  rm -rf $(FZ)/corpus-$$t $(FZ)/$$t-crash-* $(FZ)/$$t-leak-* $(FZ)/$$t-timeout-* $(FZ)/$$t-oom-*; \
	  mkdir -p $(FZ)/corpus-$$t && cp tests/fuzz/corpus/$$t/* $(FZ)/corpus-$$t/; \
	  echo "make fuzz: fuzz_$$t for $$per s"; \
	  ( cd $(FZ) && ASAN_OPTIONS=detect_leaks=1 ./fuzz_$$t -max_total_time=$$per -timeout=10 \
	      -rss_limit_mb=2048 -max_len=65536 -dict=$(CURDIR)/tests/fuzz/yaml.dict -print_final_stats=1 \
	      -artifact_prefix=$(CURDIR)/$(FZ)/$$t- corpus-$$t >$$t.log 2>&1 ); st=$$?; \
	  grep -E '^#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec' $(FZ)/$$t.log; \
	  if [ $$st -ne 0 ]; then tail -n 40 $(FZ)/$$t.log; \
	    echo "make fuzz: fuzz_$$t found a fault (log $(FZ)/$$t.log; reproducer $(FZ)/$$t-*)"; exit 1; fi; \
	done

# Installs the programs, the shipped scenarios, the gnuplot templates and
# the manual page under $(DESTDIR)$(PREFIX).
install: vlsim vlcalib
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/vlsim/scenarios \
	  $(DESTDIR)$(PREFIX)/share/vlsim/plots $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 vlsim vlcalib $(DESTDIR)$(PREFIX)/bin/
	install -m 644 scenarios/*.yaml $(DESTDIR)$(PREFIX)/share/vlsim/scenarios/
	for f in plots/*; do [ -f "$$f" ] && install -m 644 "$$f" $(DESTDIR)$(PREFIX)/share/vlsim/plots/; done; true
	install -m 644 models/vlsim.1 $(DESTDIR)$(PREFIX)/share/man/man1/vlsim.1

# build/validate-history/ holds make validate's kept experiments: measurements,
# not build outputs, so clean leaves them (rm -rf it by hand to drop them)
clean:
	if [ -d build ]; then find build -mindepth 1 -maxdepth 1 ! -name validate-history -exec rm -rf {} +; fi
	if [ -d build ] && [ -z "$$(ls -A build)" ]; then rmdir build; fi
	rm -f vlsim vlsim-mpi vlcalib vlrealpipe

-include $(shell find build -name '*.d' 2>/dev/null)
