# cyclelog — build, test, fuzz and benchmark. Every target installs what it is missing first.
SWIFT ?= swift
# The project's own Python environment, which scripts/setup.sh makes with Debian's interpreter: its python3 is the
# one every target, every test and every script they start runs (Debian's own refuses pip installs, PEP 668).
export PATH := $(CURDIR)/.venv/bin:$(PATH)
FUZZ_SECONDS ?= 60
FUZZ_BUILD := .build-fuzz
# Release binaries carry the Swift runtime and Foundation linked in: they run without the toolchain and touch
# about 5 MB less memory than with the shared libraries (measured by the live-recording benchmark). Their code reaches
# a generic type's metadata through the type's accessor, not by its mangled name: from a name the runtime checks each
# of the type's requirements by scanning all of the binary's 7 400 protocol conformances, which cost `cyclelog list`
# a fifth of its instructions (measured in `make bench`, start-up). Each function is compiled into a section of its
# own, so that the link can lay out the code a long-running program runs together (LAYOUT, below): otherwise only
# public functions are, and a source file's other code moves as one block. The flags apply to every package built.
# The compiler leaves an object alone when the code it makes of a file is unchanged, whatever these flags say: after
# changing them, remove .build/x86_64-unknown-linux-gnu/release.
RELEASE := -c release --static-swift-stdlib \
	-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
	-Xswiftc -Xfrontend -Xswiftc -function-sections

# How the four programs are linked, in release builds only (a plain `swift build` or `swift test` needs nothing but
# the toolchain, and the package's products can be used from another package): by lld (the toolchain's), their
# relative relocations packed (`DT_RELR`, glibc 2.36), and only the symbols shared libraries need exported. With
# `--static-swift-stdlib` the default link exports every symbol of the binary: the loader then reads megabytes of
# symbol tables and relocations at each start. Measured in `make bench` (start-up, and the mirror's memory). lld is
# chosen in RELEASE itself, for every release build, so that the compiler's command lines stay the same from one
# product to the next and nothing is compiled twice. Nor do they carry SwiftPM's run path `$ORIGIN` (the build
# folder): they need no library of it, and with it the loader looks for each shared library in a dozen folders of
# it first.
RELEASE += -Xswiftc -use-ld=lld
LINK := -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic --disable-local-rpath
# libstdc++ (which the Swift runtime and Foundation's ICU use) linked in too, as the runtime is: the toolchain's link
# line asks for `-lstdc++`, and the linker, looking in this folder first, finds only the static library there. Loaded
# as a shared library, its 4 300 symbol relocations cost every start a third of the dynamic loader's work: without
# it `cyclelog --version` runs 1.9 M instructions fewer, about 1 ms (Benchmarks/startup_bench.py). The
# library is GCC's (libstdc++-12-dev, which the toolchain needs anyway), found where the toolchain's clang, the
# linker's driver, finds it; GCC's runtime library exception allows linking it into any program.
STATIC_CXX := $(CURDIR)/.build/static-libstdc++
LINK += -Xlinker -L$(STATIC_CXX)
# A long-running program's code laid out in the order it runs (the recorder recording, the mirror serving;
# scripts/order-functions.py writes Benchmarks/layout/PROGRAM.order): the pages it touches stay few.
LAYOUT = -Xlinker --symbol-ordering-file=$(CURDIR)/Benchmarks/layout/$(1).order -Xlinker --no-warn-symbol-ordering
# One of the four programs, as it is released: without libdbus among the libraries it loads at its start (it loads
# it at its first D-Bus call: scripts/unlink-dbus.sh).
PROGRAM = mkdir -p $(STATIC_CXX) && ln -sf "$$(clang -print-file-name=libstdc++.a)" $(STATIC_CXX)/libstdc++.a && test -e $(STATIC_CXX)/libstdc++.a \
	&& $(SWIFT) build $(RELEASE) $(LINK) $(if $(wildcard Benchmarks/layout/$(1).order),$(call LAYOUT,$(1))) --product $(1) \
	&& scripts/unlink-dbus.sh .build/release/$(1)

.PHONY: docs setup all build release demo demo-live man test test-thirdparty test-vm unit-test conformance fuzz fuzz-smoke fuzz-mirror \
	bench lint fixtures clean install uninstall service-check release-cyclelog

all: build

setup:
	@scripts/setup.sh

build: setup
	$(SWIFT) build

# The four programs (a plain `swift build` of every target would include the test support, which needs XCTest,
# not in a build that links the runtime in).
release: setup release-cyclelog
	$(call PROGRAM,cyclelog-mirror)
	$(call PROGRAM,cyclelog-sync)
	$(call PROGRAM,cyclelog-desktop)

# The release cyclelog alone (the real-stack VM runs it).
release-cyclelog:
	$(call PROGRAM,cyclelog)

# The main job: replay a ride (a btsnoop capture made from a real ride's FIT records, Fixtures/README.md) into the
# default database and print the workout and the FTP.
demo: build
	.build/debug/cyclelog replay Fixtures/rides/sweatpy_4078723797.btsnoop
	.build/debug/cyclelog ftp

# A demonstration of live recording without Bluetooth hardware: the BlueZ stand-in plays the demo ride's capture in
# real time on a private bus, `cyclelog record` shows its dashboard here and the mirror prints a pairing link.
# Its database is a temporary one, never the rider's (scripts/demo-live.sh says what it does).
demo-live: build
	scripts/demo-live.sh

# All tests that need nothing but the repository: unit and CLI tests and, beside them (scripts/test.sh), tshark
# conformance, the service files, the manual pages, the documentation and a short run of every fuzz target.
test: setup
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) scripts/test.sh

# The CyclingSensors library's documentation (DocC): its symbols, extracted from the module the usual debug build
# made, and Sources/CyclingSensors/Documentation.docc, into .build/docs/CyclingSensors.doccarchive (`docc preview`
# serves it). A link or a symbol that does not resolve fails it.
docs: setup
	$(SWIFT) build --target CyclingSensors
	rm -rf .build/docs && mkdir -p .build/docs/symbol-graphs
	$(SWIFT) symbolgraph-extract -module-name CyclingSensors -I "$$($(SWIFT) build --show-bin-path)/Modules" \
		-target "$$(uname -m)-unknown-linux-gnu" -output-dir .build/docs/symbol-graphs
	docc convert Sources/CyclingSensors/Documentation.docc --warnings-as-errors \
		--additional-symbol-graph-dir .build/docs/symbol-graphs --fallback-display-name CyclingSensors \
		--fallback-bundle-identifier org.cyclelog.CyclingSensors --output-path .build/docs/CyclingSensors.doccarchive

# A manual page per program, from the programs' own help, in .build/man (`man -l .build/man/cyclelog.1`);
# `make install` installs them.
man: build
	python3 scripts/make-man.py --bin .build/debug --out .build/man

# Real files from other tools and peers (bike computers' FIT files, workout files): users' files, not the project's, so they are
# not in the repository. THIRDPARTY names their folder (a checkout of the project's shared data beside the clone).
THIRDPARTY ?= ../shared/data/thirdparty
test-thirdparty: setup
	@test -d "$(THIRDPARTY)/fit" || { echo "test-thirdparty: no folder $(THIRDPARTY)/fit: these tests read real" \
		"third-party FIT files kept outside the repository; name their folder with THIRDPARTY=DIR" >&2; exit 1; }
	$(SWIFT) build --build-tests
	CYCLELOG_THIRDPARTY_FIT="$(abspath $(THIRDPARTY))/fit" SWIFT=$(SWIFT) scripts/swift-test.sh \
		--filter MirrorTests.testTheHistoryAnswersWhatTheCLIPrints
	python3 Tests/ThirdParty/check_thirdparty.py --cyclelog .build/debug/cyclelog --data "$(THIRDPARTY)/fit"
	python3 Tests/ThirdParty/check_workouts.py --cyclelog .build/debug/cyclelog --data "$(THIRDPARTY)/workouts"

# The mirror's routes over HTTP with random and extreme values: MIRROR_FUZZ_REQUESTS (default 1 000 000) against
# the release build.
MIRROR_FUZZ_REQUESTS ?= 1000000
fuzz-mirror: setup
	$(call PROGRAM,cyclelog)
	$(call PROGRAM,cyclelog-mirror)
	python3 Fuzz/mirror_routes.py --requests $(MIRROR_FUZZ_REQUESTS)

# The service files (systemd unit, udev rules, D-Bus policy, make install) checked on their own.
service-check: build
	python3 Tests/ServiceFiles/check_service_files.py --cyclelog .build/debug/cyclelog

# cyclelog as a system service (systemd unit, its user, udev rules, D-Bus policy); PREFIX and DESTDIR as usual.
install:
	@test -x .build/release/cyclelog -a -x .build/release/cyclelog-mirror -a -x .build/release/cyclelog-sync -a -x .build/release/cyclelog-desktop || $(MAKE) --no-print-directory release
	scripts/install-service.sh install

uninstall:
	scripts/install-service.sh uninstall

# cyclelog on the real Linux Bluetooth stack: bluetoothd and virtual controllers in a qemu VM (Tests/RealStack).
test-vm:
	Tests/RealStack/run.sh

unit-test: setup
	$(SWIFT) test

conformance: build
	python3 Tests/Conformance/tshark_conformance.py --cyclelog .build/debug/cyclelog

# libFuzzer over every decoder entry point; FUZZ_SECONDS each (default 60).
fuzz: setup
	Fuzz/run.sh $(FUZZ_SECONDS)

fuzz-smoke: setup
	Fuzz/run.sh 3

bench:
	@scripts/setup.sh --bench
	@rm -f .build/bench/results.jsonl
	$(SWIFT) build $(RELEASE) --product DecodeBenchmark
	$(SWIFT) build $(RELEASE) --product MetricsBenchmark
	$(SWIFT) build $(RELEASE) --product WorkoutBenchmark
	$(call PROGRAM,cyclelog)
	$(call PROGRAM,cyclelog-mirror)
	$(call PROGRAM,cyclelog-sync)
	$(call PROGRAM,cyclelog-desktop)
	.build/release/DecodeBenchmark
	.build/release/MetricsBenchmark
	python3 Benchmarks/startup_bench.py
	python3 Benchmarks/decode_bench.py
	python3 Benchmarks/replay_bench.py
	python3 Benchmarks/fit_bench.py
	python3 Benchmarks/live_bench.py
	python3 Benchmarks/start_bench.py
	python3 Benchmarks/trainer_bench.py
	python3 Benchmarks/hub_bench.py
	python3 Benchmarks/workout_bench.py
	python3 Benchmarks/mirror_bench.py
	python3 Benchmarks/history_bench.py
	python3 Benchmarks/decade_bench.py
	python3 Benchmarks/sync_bench.py
	python3 Benchmarks/upload_bench.py
	python3 Benchmarks/desktop_bench.py
	python3 Benchmarks/summary.py

lint:
	$(SWIFT) format lint --strict -r Sources Tests Benchmarks Fuzz Package.swift

# Regenerates Fixtures/captures and Fixtures/rides from ../shared/data (the project's shared data beside the
# clone); the fixtures in the repository are already made, so a plain clone needs none of this.
fixtures:
	@test -d ../shared/data/captures -a -d ../shared/data/rides || { echo "fixtures: no ../shared/data/captures" \
		"and rides beside this clone: the fixtures are made from the project's shared data; the ones in" \
		"Fixtures/ are already made and need nothing" >&2; exit 2; }
	scripts/import-shared-captures.py
	scripts/make-capture-journals.py
	scripts/make-ride-fixtures.py

clean:
	rm -rf .build $(FUZZ_BUILD)
