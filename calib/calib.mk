# calib/calib.mk — the calibration kernels and vlcalib; included by the
# top-level Makefile. It only appends to EXTRA_TEST_DEPS, EXTRA_ATEST_DEPS,
# EXTRA_LDLIBS and .PHONY, and adds its own targets; it must never change
# any other top-level variable.
#
#   make vlcalib           ./vlcalib, CPU backend only (OpenBLAS)
#   make CUDA=1 vlcalib    ./vlcalib with --backend cuda as well (nvcc, cudart, cuBLAS)
#   make cuda-check        compile calib/cuda_ops.cu with nvcc -arch=sm_90 -O2;
#                          without nvcc, says so and succeeds
#
# Needs the Debian package libopenblas-dev (cblas.h, libopenblas).

OPENBLAS_CFLAGS := $(shell pkg-config --cflags openblas 2>/dev/null)
OPENBLAS_LIBS   := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)

NVCC ?= $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
NVCCFLAGS := -std=c++17 -arch=sm_90 -O2 -I. -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror,-Wshadow
CUDA_LIBS  = -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart -lstdc++

CUDA_OBJ := build/cuda/calib/cuda_ops.o

# Everything but the program's main and the no-CUDA stand-in goes in the archive.
CALIB_LIB_SRCS := $(filter-out calib/vlcalib.c calib/cuda_stub.c,$(sort $(wildcard calib/*.c)))

$(B)/libvlcalib.a: $(CALIB_LIB_SRCS:%.c=$(B)/%.o)
	rm -f $@ && ar rcs $@ $^

$(A)/libvlcalib.a: $(CALIB_LIB_SRCS:%.c=$(A)/%.o)
	rm -f $@ && ar rcs $@ $^

$(B)/calib/cpu.o $(A)/calib/cpu.o: BASEFLAGS += $(OPENBLAS_CFLAGS)

# H.264 decode timing (decode_time.c): libavcodec with libx264, Debian's
# libavcodec-dev and libavutil-dev.
AV_CFLAGS := $(shell pkg-config --cflags libavcodec libavutil 2>/dev/null)
AV_LIBS   := $(shell pkg-config --libs libavcodec libavutil 2>/dev/null || echo -lavcodec -lavutil)
$(B)/calib/decode_time.o $(A)/calib/decode_time.o $(B)/calib/vlcalib_decode.o $(A)/calib/vlcalib_decode.o: BASEFLAGS += $(AV_CFLAGS)

EXTRA_TEST_DEPS  += $(B)/calib/cuda_stub.o $(B)/libvlrealpipe.a $(B)/libvlcalib.a
EXTRA_ATEST_DEPS += $(A)/calib/cuda_stub.o $(A)/libvlrealpipe.a $(A)/libvlcalib.a
EXTRA_LDLIBS     += $(OPENBLAS_LIBS) $(AV_LIBS)

# vlcalib relinks when CUDA= changes: the flag file names the backend.
VLCALIB_FLAG := $(B)/calib/.backend-$(if $(CUDA),cuda,cpu)
ifdef CUDA
VLCALIB_BACKEND := $(CUDA_OBJ)
VLCALIB_BACKEND_LIBS = $(CUDA_LIBS)
else
VLCALIB_BACKEND := $(B)/calib/cuda_stub.o
VLCALIB_BACKEND_LIBS :=
endif

$(VLCALIB_FLAG):
	@mkdir -p $(dir $@) && rm -f $(B)/calib/.backend-* && touch $@

vlcalib: $(B)/calib/vlcalib.o $(VLCALIB_BACKEND) $(B)/libvlcalib.a $(B)/libvlsim.a $(VLCALIB_FLAG)
	$(CC) $(CFLAGS) -o $@ $(filter-out $(VLCALIB_FLAG),$^) $(OPENBLAS_LIBS) $(AV_LIBS) $(VLCALIB_BACKEND_LIBS) $(LDLIBS)

$(CUDA_OBJ): calib/cuda_ops.cu calib/cuda_ops.h calib/harness.h calib/weights.h calib/presets.h calib/tome.h
	@if [ -z "$(NVCC)" ]; then echo "calib: nvcc not found; install the CUDA toolkit or set NVCC=" >&2; exit 1; fi
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c -o $@ $<

.PHONY: cuda-check
ifneq ($(NVCC),)
cuda-check: $(CUDA_OBJ)
	@echo "cuda-check: calib/cuda_ops.cu compiles with $(NVCC) for sm_90"
else
cuda-check:
	@echo "cuda-check: nvcc not found (looked on PATH and in /usr/local/cuda/bin); skipping the CUDA compile check"
endif

# The real pipeline (issue 7, calib/realpipe/README.md): ./vlrealpipe, and
# `make validate`, the experiment that compares it with the simulator
# (timing-sensitive: never part of `make test`; about 7 minutes).
REALPIPE_LIB_SRCS := $(filter-out calib/realpipe/rp_main.c,$(sort $(wildcard calib/realpipe/*.c)))

$(B)/libvlrealpipe.a: $(REALPIPE_LIB_SRCS:%.c=$(B)/%.o)
	rm -f $@ && ar rcs $@ $^

$(A)/libvlrealpipe.a: $(REALPIPE_LIB_SRCS:%.c=$(A)/%.o)
	rm -f $@ && ar rcs $@ $^

$(patsubst %,$(B)/calib/realpipe/%.o,rp_pipe rp_ops) $(patsubst %,$(A)/calib/realpipe/%.o,rp_pipe rp_ops): BASEFLAGS += $(AV_CFLAGS)

vlrealpipe: $(B)/calib/realpipe/rp_main.o $(B)/libvlrealpipe.a $(B)/calib/cuda_stub.o $(B)/libvlcalib.a $(B)/libvlsim.a
	$(CC) $(CFLAGS) -o $@ $^ $(OPENBLAS_LIBS) $(AV_LIBS) $(LDLIBS)

.PHONY: validate
validate: deps
	@$(MAKE) --no-print-directory vlsim vlcalib vlrealpipe
	calib/realpipe/validate.sh
