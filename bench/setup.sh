#!/usr/bin/env bash
# Installs the tools only the benchmark needs (run by `make bench` before bench/bench.sh; not
# part of scripts/install-deps.sh, since neither building nor testing edgeprof needs them):
#   bolt-19         llvm-bolt-19, which rewrites a binary linked with -Wl,--emit-relocs with
#                   `-instrument` (bench.sh's bolt column, the peer that counts without
#                   recompiling)
#   libbolt-19-dev  its instrumentation runtime, /usr/lib/llvm-19/lib/libbolt_rt_instr.a
# Debian 12 packages (bookworm main). Idempotent: does nothing when both are installed.
# Exit 0 when both are there afterwards; otherwise one line on stderr and exit 1 (bench.sh
# then reports the bolt column as missing and measures the rest).
set -euo pipefail

PKGS=(bolt-19 libbolt-19-dev)
log() { echo "bench/setup: $*" >&2; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

missing=()
for p in "${PKGS[@]}"; do
	installed "$p" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	log "${missing[*]} not installed and not root: run 'bench/setup.sh' as root (apt-get)"
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
	# Usually stale package lists: update once and retry.
	apt-get update -q >/dev/null 2>&1 || true
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
		log "apt-get install ${missing[*]} failed"
		exit 1
	}
fi
for p in "${PKGS[@]}"; do
	installed "$p" || {
		log "$p is still not installed"
		exit 1
	}
done
log "installed ${missing[*]}"
