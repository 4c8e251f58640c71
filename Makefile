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
#          jackd2 + libasound2-plugins give the paced `jacktap` test device, and jackd2 the
#          private servers and tools (jack_lsp, jack_transport, jack_showtime, jack_bufsize,
#          jack_iodelay) the JACK tests and `bench jack` use;
#          swh-lv2, x42-plugins, mda-lv2 are the LV2 plugins the tests host;
#          lilv-utils (lv2ls, lv2info, lv2apply) checks the bundle `make lv2` builds;
#          groff checks the generated man page; bash, zsh and fish load the completions;
#          liblo-tools (oscsend, oscdump) is the independent OSC client the OSC tests speak through.
#   libebur128: EBU R128 loudness; libjack (the JACK backend and its MIDI ports); liblo (OSC,
#          the NSM client); libfluidsynth (the gm instrument); fluid-soundfont-gm is the
#          SoundFont gm plays by default (a run-time recommendation, and the tests' sounds);
#          midicsv is the independent MIDI file reader/writer the tests compare against;
#          sox reads an export's FLAC chapter comments back (another program's reading);
#          ffmpeg (ffprobe and its ebur128 filter) reads MP3 and Opus exports back: codec,
#          length, loudness, tags and chapters, and a FLAC's time_reference comment.
#   pipewire, pipewire-bin, pipewire-jack, libspa-0.2-jack, wireplumber, dbus: the JACK tests that
#          matter (loopback alignment, stalls, transport) run under PipeWire's JACK too, on a
#          private headless PipeWire the tests start (Tests/Fixtures/pipewire-headless.sh).
#   strace: kills a mirror recovery at each of its renames (fault injection) to show nothing
#          is lost; python3-minimal: connects to the control socket as another user; time:
#          the many-regions test's CPU and memory; gcc: builds a test LV2 plugin with latency.
#          Without them those tests skip, so a bare machine would pass without running them.
BUILD_PACKAGES := libasound2-dev libncurses-dev libsndfile1-dev librubberband-dev \
                  libsamplerate0-dev libebur128-dev liblilv-dev lv2-dev pkg-config \
                  libjack-jackd2-dev liblo-dev libfluidsynth-dev
TEST_PACKAGES  := tmux alsa-utils jackd2 libasound2-plugins swh-lv2 x42-plugins mda-lv2 lilv-utils \
                  groff-base zsh fish fluid-soundfont-gm midicsv liblo-tools sox ffmpeg \
                  pipewire pipewire-bin pipewire-jack libspa-0.2-jack wireplumber dbus \
                  strace python3-minimal time gcc
#   deb:   dpkg-shlibdeps (dpkg-dev) names the runtime libraries the binary needs.
DEB_PACKAGES   := dpkg-dev
#   bench: ffmpeg's two-pass loudnorm is the peer of `bench loudness`.
BENCH_PACKAGES := ecasound sox rubberband-cli hyperfine ffmpeg

# Where `make install` puts things (DESTDIR stages them elsewhere, e.g. for a package).
PREFIX       ?= /usr/local
DESTDIR      ?=
BINDIR        = $(DESTDIR)$(PREFIX)/bin
DATADIR       = $(DESTDIR)$(PREFIX)/share/tapedeck
MANDIR        = $(DESTDIR)$(PREFIX)/share/man/man1
BASHCOMPDIR   = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR    = $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR   = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
# The Swift runtime goes into the binary, so it runs where no Swift toolchain is installed.
RELEASE_FLAGS ?= --static-swift-stdlib
VERSION      := $(shell sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/TapedeckCommands/CLI/HelpText.swift)
SAMPLES      := drums.flac bass.flac keys.flac click.flac

.PHONY: deps test-deps bench-deps deb-deps build release run test test-load test-edges bench samples clean commit \
        install install-files uninstall deb lv2 fuzz docs

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

deb-deps: deps
	$(call install_missing,$(DEB_PACKAGES))

# The commit `tapedeck --version` shows, written only when it changes (and then the one C
# file that reads it is touched, so the next build picks it up); "unknown" without git.
commit:
	@c=$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown); \
	if [ "$$c" != unknown ] && [ -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then c="$$c-dirty"; fi; \
	line="#define TAPEDECK_COMMIT \"$$c\""; \
	if [ "$$(cat Sources/CBuildInfo/commit.h 2>/dev/null)" != "$$line" ]; then \
	  echo "$$line" > Sources/CBuildInfo/commit.h; touch Sources/CBuildInfo/build_info.c; fi

# A release build is the tapedeck binary alone: with the Swift runtime linked statically it
# cannot also link the LV2 library (a shared object; `make lv2` builds that).
build: deps commit
	$(SWIFT) build -c $(CONFIG) $(if $(filter release,$(CONFIG)),$(RELEASE_FLAGS) --product tapedeck) $(BUILD_FLAGS)

release:
	$(MAKE) build CONFIG=release

# The man pages of the commands (tapedeck-record.1, …), named after the committed Markdown
# pages, which a test keeps equal to the command table: uninstall needs no binary to list them.
COMMAND_MANS := $(patsubst docs/commands/%.md,tapedeck-%.1,$(filter-out docs/commands/README.md,$(wildcard docs/commands/*.md)))

# Installs the release binary, its themes and demo clips, the man pages and completions.
install: release
	$(MAKE) install-files CONFIG=release

# Installs what is already built (CONFIG=debug installs the debug binary; the tests do).
# The binary finds share/tapedeck/ from its own location, so any PREFIX works.
install-files:
	install -d $(BINDIR) $(DATADIR)/themes $(DATADIR)/samples $(MANDIR) $(BASHCOMPDIR) $(ZSHCOMPDIR) $(FISHCOMPDIR)
	install -m 755 $(BIN) $(BINDIR)/tapedeck
	install -m 644 Themes/*.theme $(DATADIR)/themes/
	install -m 644 $(addprefix Samples/,$(SAMPLES)) $(DATADIR)/samples/
	$(BIN) man > $(MANDIR)/tapedeck.1
	$(BIN) docs --man $(MANDIR) > /dev/null
	$(BIN) completions bash > $(BASHCOMPDIR)/tapedeck
	$(BIN) completions zsh > $(ZSHCOMPDIR)/_tapedeck
	$(BIN) completions fish > $(FISHCOMPDIR)/tapedeck.fish

# Removes exactly what install-files installs (and the folders it made, when left empty).
uninstall:
	rm -f $(BINDIR)/tapedeck $(MANDIR)/tapedeck.1 $(MANDIR)/tapedeck.1.gz $(BASHCOMPDIR)/tapedeck \
	      $(ZSHCOMPDIR)/_tapedeck $(FISHCOMPDIR)/tapedeck.fish
	rm -f $(addprefix $(MANDIR)/,$(COMMAND_MANS) $(addsuffix .gz,$(COMMAND_MANS)))
	rm -f $(addprefix $(DATADIR)/themes/,$(notdir $(wildcard Themes/*.theme))) $(addprefix $(DATADIR)/samples/,$(SAMPLES))
	-rmdir $(DATADIR)/themes $(DATADIR)/samples $(DATADIR) 2>/dev/null

# A Debian package of the release build (PREFIX /usr). Its Depends are worked out by
# dpkg-shlibdeps from the libraries the binary links: runtime packages, never -dev ones.
DEB_ROOT := .build/deb/tapedeck
DEB_ARCH  = $(shell dpkg --print-architecture)
deb: deb-deps release
	rm -rf .build/deb && mkdir -p $(DEB_ROOT)/DEBIAN .build/deb/debian
	$(MAKE) install-files CONFIG=release PREFIX=/usr DESTDIR=$(CURDIR)/$(DEB_ROOT)
	strip --strip-unneeded $(DEB_ROOT)/usr/bin/tapedeck
	gzip -9n $(DEB_ROOT)/usr/share/man/man1/*.1
	printf 'Source: tapedeck\nMaintainer: Tapedeck <tapedeck@localhost>\n\nPackage: tapedeck\nArchitecture: any\nDescription: x\n' \
	  > .build/deb/debian/control
	cd .build/deb && dpkg-shlibdeps -O -e tapedeck/usr/bin/tapedeck 2>/dev/null | sed -n 's/^shlibs:Depends=//p' > depends
	@test -s .build/deb/depends || { echo "dpkg-shlibdeps found no dependencies"; exit 1; }
	{ echo "Package: tapedeck"; echo "Version: $(VERSION)"; echo "Architecture: $(DEB_ARCH)"; \
	  echo "Maintainer: Tapedeck <tapedeck@localhost>"; echo "Depends: $$(cat .build/deb/depends)"; \
	  echo "Recommends: libfluidsynth3, fluid-soundfont-gm"; \
	  echo "Section: sound"; echo "Priority: optional"; \
	  echo "Installed-Size: $$(du -sk $(DEB_ROOT)/usr | cut -f1)"; \
	  echo "Description: multitrack recorder that lives in a terminal"; \
	  echo " Records ALSA input through effect chains, plays tracks back with time-pitch"; \
	  echo " control, writes WAV and FLAC, and measures EBU R128 loudness."; } > $(DEB_ROOT)/DEBIAN/control
	dpkg-deb --root-owner-group --build $(DEB_ROOT) tapedeck_$(VERSION)_$(DEB_ARCH).deb

# Opens the demo session; works with no sound card (the screen falls back to an offline device).
run: build
	@[ -d $(DEMO) ] || $(BIN) demo $(DEMO)
	$(BIN) $(DEMO)

# Builds everything and runs every test. Tests find the binary under .build/debug.
test: test-deps commit
	$(SWIFT) build $(BUILD_FLAGS)
	$(SWIFT) test $(BUILD_FLAGS)

# The real-time tests (JACK, MIDI, screen, remote control) three times in a row with a busy
# process on every core: what holds only on a quiet machine fails here. Not part of `make test`.
test-load: test-deps commit
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	Tests/Load/run-under-load.sh

# Where takes land, alone and three times in a row (the loopback matrix and the server stalls
# on jackd2 and PipeWire's JACK, all part of `make test` too): for a change to placement.
test-edges: test-deps commit
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	for round in 1 2 3; do $(SWIFT) test --skip-build $(BUILD_FLAGS) --filter 'LoopbackMatrixTests|ServerStallTests' || exit 1; done

# Tapedeck's effect nodes as LV2 plugins for other hosts: $(LV2_BUNDLE)/ holds the plugin
# library and the TTL written from the node descriptors. Install by copying it to ~/.lv2/.
lv2: deps
	$(SWIFT) build -c $(CONFIG) $(BUILD_FLAGS) --product tapedeck-lv2
	$(SWIFT) build -c $(CONFIG) $(BUILD_FLAGS) --product tapedeck-lv2-bundle
	.build/$(CONFIG)/tapedeck-lv2-bundle .build/$(CONFIG)/libtapedeck-lv2.so $(LV2_BUNDLE)

# Fuzzing: 10^5 seeded cases per parser (times, chains, session JSON, keys and theme files,
# audio headers, MIDI files, control socket lines, output paths through the write guard; the
# command line gets a tenth, output paths among it), each in a watched worker that reports
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

# One Markdown page per command in docs/commands/, from the command table (commit them: a
# test fails when they differ from what the binary prints).
docs: build
	$(BIN) docs docs/commands

clean:
	rm -rf .build tapedeck.lv2
