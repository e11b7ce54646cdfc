# Sourced by the llama probe tests (after lib.sh): sets LLAMA_DIR to the
# prebuilt llama.cpp libraries of the npm package @node-llama-cpp/linux-x64
# (EP_LLAMA_LIB_DIR, or fetched once into the build directory). Skips (77)
# when the package cannot be fetched; under CI=true that is a failure, as
# CI reaches the npm registry.
llama_skip() { echo "SKIP: $*"; [ "${CI:-}" = true ] && exit 1; exit 77; }
LLAMA_DIR=${EP_LLAMA_LIB_DIR:-}
if [ -z "$LLAMA_DIR" ]; then
	LLAMA_CACHE="${EP_BUILD_DIR:-$EP_WORK}/llama-npm"
	LLAMA_DIR="$LLAMA_CACHE/package/bins/linux-x64"
	mkdir -p "$LLAMA_CACHE"
	# Two llama tests may run at once under ctest -j: one fetches.
	exec 9>"$LLAMA_CACHE/.lock"
	flock 9
	if [ ! -f "$LLAMA_DIR/libllama.v0.5.0.so" ]; then
		command -v npm >/dev/null || llama_skip "npm not available to fetch @node-llama-cpp/linux-x64"
		(cd "$LLAMA_CACHE" && timeout 300 npm pack --silent @node-llama-cpp/linux-x64@3.22.1 >/dev/null 2>&1 &&
			tar xzf node-llama-cpp-linux-x64-3.22.1.tgz) ||
			llama_skip "cannot fetch @node-llama-cpp/linux-x64 (offline?)"
	fi
	flock -u 9
	exec 9>&-
fi
[ -f "$LLAMA_DIR/libllama.v0.5.0.so" ] || ep_fail "no libllama.v0.5.0.so in $LLAMA_DIR"
