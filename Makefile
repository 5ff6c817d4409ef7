# The two commands README.md promises on a fresh Debian 12 machine, as root:
#   make run    install missing Debian packages, build aimem alone, run `aimem diagnose` on this host
#   make test   the same, then the whole test suite through CTest
# `make test-sanitize` runs the suite once more under ASan and UBSan (CI does);
# a test that fails there is run once more before it counts (the sanitizers run
# every timing-bound test several times slower; a failure that repeats fails).
# `make fuzz` runs every libFuzzer target for FUZZ_SECONDS each (CI does).

BUILD      ?= build
SAN_BUILD  ?= build-sanitize
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
# Each target's seeds: tests/fuzz/<name>_corpus (diagnose: tests/fuzz/corpus),
# and captured outputs for some (see tests/CMakeLists.txt).
FUZZERS = diagnose safetensors gguf promtext structured probe_http http_request prom_response
JOBS       ?= $(shell nproc)
# The sanitizer suite runs one test more than there are cores: its tests wait
# on servers, engines and timeouts a third of the time (two cores were 65% busy
# at -j2), and -j3 took it from 20.3 to 16.9 minutes here. Since the test binary
# carries the compiled pattern database (tests/CMakeLists.txt) it takes under
# 5 minutes here (1266 tests in 286 s; each test process had compiled the
# patterns under ASan, about 4 s a test). Timing-bound tests
# get their second run there (--repeat until-pass:2).
SAN_TEST_JOBS ?= $(shell echo $$(( $(JOBS) + 1 )))
DEB_PACKAGES = build-essential cmake pkg-config \
  libcli11-dev libfmt-dev nlohmann-json3-dev libyaml-cpp-dev libvectorscan-dev \
  libsystemd-dev libsqlite3-dev libcivetweb-dev libcpp-httplib-dev \
  libgtest-dev libgmock-dev libbenchmark-dev systemd-journal-remote \
  prometheus prometheus-node-exporter sqlite3 python3-jsonschema openssl \
  clang libbpf-dev

# The real llama.cpp engine (CPU build) from npm, for the accuracy tests of
# `aimem fit` and the test server of `aimem probe`: pinned versions, 85 MB.
NODE_DIR      = build-node
NLC_VERSION   = 3.22.1

.PHONY: all deps node-deps build run test test-sanitize fuzz bench clean

all: build

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Only the aimem binary: the test suite (and its engines) is `make test`'s.
run: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target aimem
	./$(BUILD)/aimem diagnose

node-deps: $(NODE_DIR)/node_modules/node-llama-cpp/package.json

$(NODE_DIR)/node_modules/node-llama-cpp/package.json:
	mkdir -p $(NODE_DIR)
	cd $(NODE_DIR) && npm install --no-audit --no-fund --omit=optional --loglevel=error \
	  node-llama-cpp@$(NLC_VERSION) @node-llama-cpp/linux-x64@$(NLC_VERSION)

# A test that fails is run once more, as in test-sanitize: the suite runs real
# cgroups, engines and timers beside each other on two cores, and a timing
# bound that a loaded machine missed once (two tests did here, then passed
# 8 of 8 alone) should not hide a whole change. A test that fails twice fails.
test: build node-deps
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --repeat until-pass:2

# With clang (a dependency already, for the BPF object and the fuzz targets):
# it compiles this build in about 60% of g++'s time (see CMakeLists.txt).
$(SAN_BUILD)/CMakeCache.txt:
	CC=clang CXX=clang++ cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DAIMEM_SANITIZE=ON -DAIMEM_BENCH=OFF

test-sanitize: deps node-deps $(SAN_BUILD)/CMakeCache.txt
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(SAN_TEST_JOBS) --repeat until-pass:2

$(FUZZ_BUILD)/CMakeCache.txt:
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAIMEM_FUZZ=ON -DAIMEM_BENCH=OFF

# tests/fuzz/run_all.sh runs the targets JOBS at a time; new inputs go to
# $(FUZZ_BUILD)/corpus/NAME (the seeds in the repository are only read). A
# crash, a leak, a 10 s input or one allocation over 256 MB fails the run.
fuzz: deps $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(FUZZERS:%=%_fuzzer)
	./tests/fuzz/run_all.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(JOBS) $(FUZZERS)

bench: build
	./bench/diagnose_vs_grep.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(NODE_DIR)
