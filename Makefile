# BeaconBridge: every target installs what it needs first (idempotent), so a fresh Debian 12 machine with only
# the Swift toolchain can run `make test` and `make demo` directly.
SHELL := /bin/bash
SWIFT ?= swift
SWIFTC ?= swiftc
APT_PACKAGES := libbluetooth-dev libmosquitto-dev libsqlite3-dev libyaml-dev libssl-dev libcurl4-openssl-dev zlib1g-dev pkg-config mosquitto mosquitto-clients openssl python3 python3-venv
FUZZ_SECONDS ?= 60
BUILD_FLAGS := -Xswiftc -warnings-as-errors
# The release configuration of every target that builds one (release, test, deb, bench, demo, e2e), so they share
# one compile: the Swift runtime linked statically, as the Debian package ships it, and the package's hardening
# (full RELRO, lintian's hardening-no-bindnow).
RELEASE_FLAGS := -c release --static-swift-stdlib -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now $(BUILD_FLAGS)
RELEASE_BIN := $(CURDIR)/.build/release/beaconbridge
# Runs a stage and prints its wall time when it ends (one line per stage; scripts/stage.sh).
STAGE := scripts/stage.sh

.PHONY: deps build release check test lint format fuzz bench demo e2e deb deb-arm64 deb-trixie arm64-smoke arm64-stage cross-roots-background clean

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build $(BUILD_FLAGS)

# The Swift runtime linked statically, as the Debian package ships it (scripts/deb.sh), so the benches measure the
# binary users run (its RSS is about 1.5 MB lower than with the shared runtime).
release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

# The inner loop (docs/testing.md): lint, the Swift suites (unit and integration: real mosquitto, SQLite files, the
# built binary) and the cross-check against Home Assistant's reference sensor decoders (scripts/reference-check.sh,
# about 15 s; SKIP without PyPI), and, beside the suites at nice 19, a type-check of both fuzz harnesses (scripts/fuzz.sh
# --typecheck: a harness that no longer compiles fails here, not only in .ci/run's fuzz build). No QEMU, no Home Assistant or ESPHome venv stages, no release build.
check: deps
	@$(STAGE) --reset
	@$(STAGE) lint $(MAKE) --no-print-directory lint
	@$(STAGE) build $(SWIFT) build --build-tests $(BUILD_FLAGS)
	@rm -f .build/fuzz-typecheck.status; nice -n 19 scripts/fuzz.sh --typecheck > .build/fuzz-typecheck.log 2>&1 &
	@$(STAGE) swift-tests scripts/swift-tests.sh $(SWIFT)
	@$(STAGE) fuzz-typecheck scripts/fuzz.sh --wait-typecheck
	@$(STAGE) reference env SWIFT=$(SWIFT) scripts/reference-check.sh
	@$(STAGE) --summary

# Everything `make check` runs, then the release build of every target (`make release`, `make demo`, `make bench`
# use it, so a change that breaks them fails here), then the arm64 package's cross build (trixie's Swift 6.0.3,
# scripts/arm64-stage.sh --start) started in the background at nice 19, so it uses only the core the single-threaded
# stages below leave idle; then the Home Assistant stage (a pinned Home Assistant Core in a cached venv against the
# built gateway, about 90 s, docs/home-assistant.md; SKIP without PyPI), the same checks against Core 2026.2.3, the
# newest for Python 3.13, chrooted in a small Debian 13 root (scripts/ha-stage-trixie.sh; SKIP without root or
# PyPI), the ESPHome Bluetooth proxy stage (the pinned aioesphomeapi against the built gateway, about 35 s; SKIP
# without PyPI), the end-to-end stage through the Linux BlueZ stack in a QEMU guest (docs/e2e.md; it prints SKIP
# only where QEMU cannot run at all), the systemd stage: the Debian package made from the release binary
# (scripts/deb.sh with DEB_BIN: one compile, not a second one for the package) in a Debian 12 guest booted with
# systemd as init (docs/e2e.md, "The systemd stage"); last the arm64 stage waits for its background build and runs
# the package's smoke tests under qemu-user against the release binary (SKIP only without root or binfmt_misc). The
# cross build's roots are created in the background from the first step (cross-roots-background), so on a fresh
# machine that overlaps with the stages before. Every stage prints its wall time when it ends, and the list of them
# comes last.
test: cross-roots-background check
	@$(STAGE) release $(SWIFT) build $(RELEASE_FLAGS)
	@$(STAGE) arm64-start scripts/arm64-stage.sh --start
	@$(STAGE) home-assistant scripts/ha-stage.sh $(CURDIR)/.build/debug/beaconbridge
	@$(STAGE) home-assistant-trixie scripts/ha-stage-trixie.sh $(CURDIR)/.build/debug/beaconbridge
	@$(STAGE) esphome scripts/esphome-stage.sh $(CURDIR)/.build/debug/beaconbridge
	@$(STAGE) e2e env E2E_BIN=$(CURDIR)/.build/debug/beaconbridge scripts/e2e.sh
	@$(STAGE) systemd env DEB_BIN=$(RELEASE_BIN) SWIFT=$(SWIFT) scripts/systemd-stage.sh
	@$(STAGE) arm64 scripts/arm64-stage.sh --finish
	@$(STAGE) --summary

# Formatting gate (.swift-format): `make format` rewrites, `make lint` fails on any difference (about 4 s).
lint:
	$(SWIFT) format lint --strict --recursive --parallel Sources Tests Package.swift

format:
	$(SWIFT) format --in-place --recursive --parallel Sources Tests Package.swift

fuzz: deps
	scripts/fuzz.sh $(FUZZ_SECONDS)

bench: release
	$(SWIFT) build $(RELEASE_FLAGS) --product beaconbridge-bench
	.build/release/beaconbridge-bench

demo: release
	scripts/demo.sh

e2e: release
	E2E_BIN=$(RELEASE_BIN) scripts/e2e.sh

# The Debian package (docs/install.md): release binary with the Swift runtime linked statically, unit, conffile,
# docs, man page; Depends from dpkg-shlibdeps; checked with lintian. Writes .build/deb/beaconbridge_<v>_<arch>.deb.
deb: release
	DEB_BIN=$(RELEASE_BIN) SWIFT=$(SWIFT) scripts/deb.sh

# The Debian 13 (trixie) packages, built with trixie's own Swift (swiftlang 6.0.3) in a debootstrapped trixie amd64
# root, with an unpacked trixie arm64 sysroot, both cached outside the repository (scripts/cross-roots.sh; BB_ROOTS,
# default /var/cache/beaconbridge/roots): arm64 cross-compiled against the sysroot, amd64 natively; both packaged
# natively in the amd64 root. Write .build/deb/trixie/beaconbridge_<v>_<arch>.deb.
# Need root. docs/install.md, "Building the packages".
deb-arm64:
	scripts/cross-build.sh arm64

deb-trixie:
	scripts/cross-build.sh amd64

# The arm64 package's binary under qemu-user against the amd64 release binary (scripts/arm64-smoke.sh).
arm64-smoke: deb-arm64 release
	scripts/arm64-smoke.sh

# The arm64 stage of `make test` on its own (docs/testing.md): deb-arm64 then arm64-smoke, timed; SKIP where
# qemu-user cannot run.
arm64-stage:
	scripts/arm64-stage.sh

# The cross build's roots (scripts/cross-roots.sh), created in the background when missing; the first step of
# `make test`. As root only (otherwise a note, and the arm64 stage says SKIP).
cross-roots-background:
	@scripts/cross-roots.sh --background

clean:
	rm -rf .build
