# Tapedeck: `make run` and `make test` are the only commands a fresh Debian 12 machine needs.

SWIFT        ?= swift
BUILD_FLAGS  ?=
CONFIG       ?= debug
BIN          := .build/$(CONFIG)/tapedeck
DEMO         := Samples/demo.tapedeck

# Exactly what building, running and testing need (names from Debian 12).
#   build: the C libraries and pkg-config
#   test:  tmux drives the screen; alsa-utils for aplay -L when debugging;
#          jackd2 + libasound2-plugins give the paced `jacktap` test device.
BUILD_PACKAGES := libasound2-dev libncurses-dev libsndfile1-dev librubberband-dev \
                  libsamplerate0-dev liblilv-dev pkg-config
TEST_PACKAGES  := tmux alsa-utils jackd2 libasound2-plugins
BENCH_PACKAGES := ecasound sox rubberband-cli hyperfine

.PHONY: deps test-deps bench-deps build release run test fuzz bench samples clean

# Installs only what is missing; silent when everything is there.
define install_missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

deps:
	$(call install_missing,$(BUILD_PACKAGES))

test-deps: deps
	$(call install_missing,$(TEST_PACKAGES))

bench-deps: test-deps
	$(call install_missing,$(BENCH_PACKAGES))

build: deps
	$(SWIFT) build -c $(CONFIG) $(BUILD_FLAGS)

release:
	$(MAKE) build CONFIG=release

# Opens the demo session; works with no sound card (the screen falls back to an offline device).
run: build
	@[ -d $(DEMO) ] || $(BIN) demo $(DEMO)
	$(BIN) $(DEMO)

# Builds everything and runs every test. Tests find the binary under .build/debug.
test: test-deps
	$(SWIFT) build $(BUILD_FLAGS)
	$(SWIFT) test $(BUILD_FLAGS)

# Fuzzing: 10^5 seeded cases per parser (times, chains, session JSON, keys and theme files,
# audio headers; the command line gets a tenth), each in a watched worker that reports
# crashes, 10 s hangs and unclear messages; then the kill matrix (50 kills of each kind) and
# the concurrent writers (20 trials each). A release build, for speed. FUZZ_SEED replays a run.
FUZZ_CASES ?= 100000
FUZZ_SEED  ?= $(shell date +%s)
fuzz: test-deps
	$(SWIFT) build -c release $(BUILD_FLAGS)
	.build/release/tapedeck-fuzz all --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) --findings fuzz-findings
	$(SWIFT) build $(BUILD_FLAGS)
	TAPEDECK_KILL_TRIALS=50 TAPEDECK_CONCURRENCY_TRIALS=20 $(SWIFT) test $(BUILD_FLAGS) --filter 'KillMatrixTests|ConcurrentWriterTests'

bench: bench-deps
	$(MAKE) build CONFIG=release
	.build/release/tapedeck bench all

clean:
	rm -rf .build
