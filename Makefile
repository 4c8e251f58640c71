# Tapedeck: `make run` and `make test` are the only commands a fresh Debian 12 machine needs.

SWIFT        ?= swift
BUILD_FLAGS  ?=
CONFIG       ?= debug
BIN          := .build/$(CONFIG)/tapedeck
DEMO         := Samples/demo.tapedeck

LV2_BUNDLE   ?= tapedeck.lv2

# Exactly what building, running and testing need (names from Debian 12).
#   build: the C libraries and pkg-config (lv2-dev: the LV2 headers; liblilv-dev hosts plugins)
#   test:  tmux drives the screen; alsa-utils for aplay -L when debugging;
#          jackd2 + libasound2-plugins give the paced `jacktap` test device;
#          swh-lv2, x42-plugins, mda-lv2 are the LV2 plugins the tests host;
#          lilv-utils (lv2ls, lv2info, lv2apply) checks the bundle `make lv2` builds.
BUILD_PACKAGES := libasound2-dev libncurses-dev libsndfile1-dev librubberband-dev \
                  libsamplerate0-dev liblilv-dev lv2-dev pkg-config
TEST_PACKAGES  := tmux alsa-utils jackd2 libasound2-plugins swh-lv2 x42-plugins mda-lv2 lilv-utils
BENCH_PACKAGES := ecasound sox rubberband-cli hyperfine

.PHONY: deps test-deps bench-deps build release run test bench samples clean lv2

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

# Tapedeck's effect nodes as LV2 plugins for other hosts: $(LV2_BUNDLE)/ holds the plugin
# library and the TTL written from the node descriptors. Install by copying it to ~/.lv2/.
lv2: deps
	$(SWIFT) build -c $(CONFIG) $(BUILD_FLAGS) --product tapedeck-lv2
	$(SWIFT) build -c $(CONFIG) $(BUILD_FLAGS) --product tapedeck-lv2-bundle
	.build/$(CONFIG)/tapedeck-lv2-bundle .build/$(CONFIG)/libtapedeck-lv2.so $(LV2_BUNDLE)

bench: bench-deps
	$(MAKE) build CONFIG=release
	.build/release/tapedeck bench all

clean:
	rm -rf .build tapedeck.lv2
