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
# The code the daemon runs laid out together (docs/daemon-bench.md, session 28): lld, the toolchain's linker, places the
# functions listed in scripts/link-order.txt (made by scripts/link-order.sh from the bench's gateway under callgrind)
# first, hottest first, so the kernel's 64 kB fault-around windows around them map little else. Our modules are compiled
# with -function-sections (the static runtime and standard library already are), so each function can be placed alone.
# A name the binary does not have is skipped and the rest keep the default order, so a stale list costs RSS, not
# correctness. With lld also packed relative relocations (DT_RELR, glibc >= 2.36: Debian 12 and later; deb.sh says so
# in Depends): the loader reads 6 kB of them at start instead of 0.76 MB of .rela.dyn, and those pages stay mapped.
# --no-export-dynamic undoes the -export-dynamic of the toolchain's static-stdlib-args.lnk (it comes later on the link
# line, and the last one wins). That exported every public and package symbol of our own modules, about 13,300 (the
# runtime's and standard library's are already hidden by the same file's --exclude-libs ALL), in a .dynsym, .dynstr
# and .gnu.hash of 1.2 MB that stayed resident. Nothing looks them up: we dlsym none of our own symbols (the curl
# loader's dlsym is on libcurl's handle), no library refers back to the executable, the runtime's dladdr stack trace
# is printed only for debug builds' fatal errors and a few runtime errors with the backtracer off, and the Swift
# backtracer reads .symtab and DWARF. Cost: the stripped package binary no longer names its public functions to gdb
# or perf (docs/daemon-bench.md, session 28).
# LINK_ORDER=0 links as before (the default linker, no order). The arm64 and trixie packages
# (scripts/cross-build.sh, trixie's Swift 6.0.3) keep their own flags: not applied there, not measured there.
LINK_ORDER ?= 1
LINK_ORDER_FLAGS := $(if $(filter 1,$(LINK_ORDER)),-Xswiftc -Xfrontend -Xswiftc -function-sections -Xswiftc -use-ld=lld -Xlinker --symbol-ordering-file=$(CURDIR)/scripts/link-order.txt -Xlinker --no-warn-symbol-ordering -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic)
RELEASE_FLAGS := -c release --static-swift-stdlib $(LINK_ORDER_FLAGS) -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now $(BUILD_FLAGS)
RELEASE_BIN := $(CURDIR)/.build/release/beaconbridge
# Runs a stage and prints its wall time when it ends (one line per stage; scripts/stage.sh).
STAGE := scripts/stage.sh

.PHONY: deps build release print-release-flags check test test-changed lint format fuzz bench demo e2e deb deb-arm64 deb-trixie arm64-smoke arm64-stage cross-roots-background container container-root-background clean

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

# RELEASE_FLAGS for scripts that build the release binary themselves (scripts/deb.sh without DEB_BIN).
print-release-flags:
	@echo $(RELEASE_FLAGS)

# The stages of `make test` in the order the full run (CI's) takes them: `make check`'s five, then one a line. Each
# stage is defined once, as the target stage-NAME below (timed by scripts/stage.sh), and every order runs
# those targets: `make check` and `make test` this one, `make test-changed` the stages a change can affect first
# (scripts/test-order.sh, whose tables say which paths affect which stage and which stage needs which other's
# product). A new stage is its line here, its stage-NAME target and, there, its lines in those tables.
CHECK_STAGES := lint build swift-tests fuzz-typecheck reference
TEST_STAGES := $(CHECK_STAGES) \
	release \
	web \
	arm64-start \
	home-assistant \
	home-assistant-trixie \
	esphome \
	systemd-start \
	e2e \
	systemd \
	container \
	arm64
.PHONY: $(addprefix stage-,$(TEST_STAGES))
# What `make test` and `make test-changed` run before their first stage: background work that later stages wait for.
TEST_FIRST_STEPS := cross-roots-background container-root-background
DEBUG_BIN := $(CURDIR)/.build/debug/beaconbridge

# The inner loop (docs/testing.md): lint, the Swift suites (unit and integration: real mosquitto, SQLite files, the
# built binary) and the cross-check against Home Assistant's reference sensor decoders (scripts/reference-check.sh,
# about 15 s; SKIP without PyPI), and, beside the suites at nice 19, a type-check of both fuzz harnesses (scripts/fuzz.sh
# --typecheck: a harness that no longer compiles fails here, not only in .ci/run's fuzz build). No QEMU, no Home Assistant or ESPHome venv stages, no release build.
check: deps
	@$(STAGE) --reset
	@for stage in $(CHECK_STAGES); do $(MAKE) --no-print-directory stage-$$stage || exit 1; done
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
# systemd as init (docs/e2e.md, "The systemd stage"); the container stage: that package in a container image built
# from a slim Debian 12 root with buildah, run with podman as docker/compose.yaml runs it, replaying the demo story
# beside the host's binary and compared with it (scripts/container-stage.sh; SKIP only without root or where podman
# cannot start a container); last the arm64 stage waits for its background build and runs the package's smoke tests
# under qemu-user against the release binary (SKIP only without root or binfmt_misc). The cross build's roots and the
# image's root are created in the background from the first steps (cross-roots-background,
# container-root-background), so on a fresh machine that overlaps with the stages before. Every stage prints its wall
# time when it ends, and the list of them comes last.
test: $(TEST_FIRST_STEPS) deps
	@$(STAGE) --reset
	@for stage in $(TEST_STAGES); do $(MAKE) --no-print-directory stage-$$stage || exit 1; done
	@$(STAGE) --summary

# Before you push (docs/testing.md): `make test`'s stages, first those the files changed since BASE can affect (with
# the stages whose products they need), stopping at the first failure, then the rest in `make test`'s order.
# BASE=REF compares with REF (default: the merge-base with main on a branch, else the upstream's or HEAD~1);
# DRY_RUN=1 prints the base, the changed files and the order and runs nothing; AFFECTED_ONLY=1 skips the rest.
test-changed:
	@MAKE="$(MAKE)" TEST_FIRST_STEPS="$(TEST_FIRST_STEPS) deps" scripts/test-order.sh $(TEST_STAGES)

# The stages (scripts/stage.sh prints each one's wall time when it ends). Run alone, a stage does not build what it
# needs: `make check`, `make test` and `make test-changed` run them in an order that does.
stage-lint:
	@$(STAGE) lint $(MAKE) --no-print-directory lint
# The debug build with the tests, then the fuzz harnesses' type-check started beside the next stages at nice 19
# (stage fuzz-typecheck waits for it).
stage-build:
	@$(STAGE) build $(SWIFT) build --build-tests $(BUILD_FLAGS)
	@rm -f .build/fuzz-typecheck.status; nice -n 19 scripts/fuzz.sh --typecheck > .build/fuzz-typecheck.log 2>&1 &
stage-swift-tests:
	@$(STAGE) swift-tests scripts/swift-tests.sh $(SWIFT)
stage-fuzz-typecheck:
	@$(STAGE) fuzz-typecheck scripts/fuzz.sh --wait-typecheck
stage-reference:
	@$(STAGE) reference env SWIFT=$(SWIFT) scripts/reference-check.sh
# With LINK_ORDER=1 the stage also checks that the binary still has the functions scripts/link-order.txt lists
# (scripts/link-order-check.sh: at least 90 % of them and of the hottest 500; else rerun scripts/link-order.sh).
stage-release:
	@$(STAGE) release sh -c '$(SWIFT) build $(RELEASE_FLAGS) $(if $(filter 1,$(LINK_ORDER)),&& scripts/link-order-check.sh $(RELEASE_BIN))'
# A real Prometheus (Debian's) scrapes the release binary replaying the demo story with `http:` on, and its query API
# must return the figures (scripts/web-stage.sh, about 40 s; docs/status-page.md).
stage-web:
	@$(STAGE) web scripts/web-stage.sh $(RELEASE_BIN)
stage-arm64-start:
	@$(STAGE) arm64-start scripts/arm64-stage.sh --start
stage-home-assistant:
	@$(STAGE) home-assistant scripts/ha-stage.sh $(DEBUG_BIN)
stage-home-assistant-trixie:
	@$(STAGE) home-assistant-trixie scripts/ha-stage-trixie.sh $(DEBUG_BIN)
stage-esphome:
	@$(STAGE) esphome scripts/esphome-stage.sh $(DEBUG_BIN)
stage-e2e:
	@$(STAGE) e2e env E2E_BIN=$(DEBUG_BIN) scripts/e2e.sh
# The systemd stage runs in the background beside the e2e stage (each QEMU guest is one TCG vCPU: a core each) and
# stage systemd waits for it and prints its output (scripts/systemd-stage.sh --start / --finish).
stage-systemd-start:
	@$(STAGE) systemd-start env DEB_BIN=$(RELEASE_BIN) SWIFT=$(SWIFT) scripts/systemd-stage.sh --start
stage-systemd:
	@$(STAGE) systemd env DEB_BIN=$(RELEASE_BIN) SWIFT=$(SWIFT) scripts/systemd-stage.sh --finish
stage-container:
	@$(STAGE) container env DEB_BIN=$(RELEASE_BIN) SWIFT=$(SWIFT) scripts/container-stage.sh
stage-arm64:
	@$(STAGE) arm64 scripts/arm64-stage.sh --finish

# Formatting gate (.swift-format): `make format` rewrites, `make lint` fails on any difference (about 4 s); then the
# tests of `make test-changed`'s tables and order (scripts/test-order-tests.sh, about a second).
lint:
	$(SWIFT) format lint --strict --recursive --parallel Sources Tests Package.swift
	@scripts/test-order-tests.sh $(TEST_STAGES)

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

# The container image localhost/beaconbridge:<version> and :latest (docs/install.md, "Run it in a container"): the
# package of `make deb` installed in a slim Debian 12 root (scripts/container-root.sh, cached in
# /var/cache/beaconbridge/roots), built with buildah from docker/Containerfile. Needs root.
container: release
	@deb=$$(DEB_BIN=$(RELEASE_BIN) SWIFT=$(SWIFT) scripts/deb.sh | tail -n 1) && scripts/container-image.sh "$$deb"

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

# The container image's root (scripts/container-root.sh), created in the background when missing; a first step of
# `make test`. As root only (otherwise a note, and the container stage says SKIP).
container-root-background:
	@scripts/container-root.sh --background

clean:
	rm -rf .build
