#!/usr/bin/env bash
# Installs everything edgeprof needs to build, test and benchmark on Debian 12 (bookworm),
# from Debian packages only. Idempotent: safe to run again; it does nothing when all is there.
# Adds the bookworm-backports suite (libbpf >= 1.3 and bpftool come from there) and deb-src
# entries (the corpus is built with `apt-get source`) when they are missing.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: must run as root (apt-get)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
SRC=/etc/apt/sources.list.d/edgeprof.sources

# Packages from the main suite.
MAIN_PKGS="make gcc g++ clang llvm lld pkg-config binutils elfutils libelf-dev libdw-dev
	libcapstone-dev libjansson-dev libxxhash-dev libcmocka-dev valgrind libclang-rt-14-dev dpkg-dev
	zlib1g-dev libzstd-dev python3 coreutils bolt-19 libbolt-19-dev clang-19 llvm-19 lcov gcovr
	graphviz chromium python3-pil"
# Packages that must come from bookworm-backports (uprobe-multi needs libbpf >= 1.3).
BPO_PKGS="libbpf-dev bpftool"

need_update=0
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	need_update=1
fi
if ! grep -rqsE '^Types:.*deb-src|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	need_update=1
fi
if [ "$need_update" = 1 ]; then
	cat >"$SRC" <<'SOURCES'
# Added by edgeprof scripts/install-deps.sh
Types: deb deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
fi

missing=""
for p in $MAIN_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
libbpf_ok=0
if dpkg --compare-versions "$(dpkg-query -W -f='${Version}' libbpf-dev 2>/dev/null || echo 0)" ge 1:1.3; then
	libbpf_ok=1
fi
command -v bpftool >/dev/null 2>&1 && bpftool version >/dev/null 2>&1 || libbpf_ok=0

if [ -n "$missing" ] || [ "$libbpf_ok" = 0 ] || [ "$need_update" = 1 ]; then
	apt-get update -q
	[ -n "$missing" ] && apt-get install -y -q --no-install-recommends $missing
	[ "$libbpf_ok" = 0 ] && apt-get install -y -q --no-install-recommends -t bookworm-backports $BPO_PKGS
fi

# Report what we have, one line each, so a log shows the versions used.
echo "install-deps: libbpf $(dpkg-query -W -f='${Version}' libbpf-dev)," \
	"capstone $(dpkg-query -W -f='${Version}' libcapstone-dev)," \
	"elfutils $(dpkg-query -W -f='${Version}' libdw-dev)," \
	"valgrind $(dpkg-query -W -f='${Version}' valgrind)"
