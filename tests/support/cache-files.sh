# shellcheck shell=bash
# Helpers of the tests of the files edgeprof keeps across runs (decode-cache.sh,
# analysis-cache.sh). A bash library meant to be SOURCED (it sets no shell options).
#
#   same_profiles A B     the profiles A and B are equal but for the run's timings
#   spoil_cache FILE HOW  changes a kept file: damaged (a payload byte in its middle flipped),
#                         truncated (its last 8 bytes gone) or tool (a byte of the edgeprof
#                         build ID in its header flipped: byte 16 is one in either format)
#   cache_files DIR       how many files named by 32 hex digits DIR holds

same_profiles() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for p in (a, b):
    for k in ("seconds", "analysis_s"):
        p["run"].pop(k, None)
sys.exit(0 if a == b else 1)
EOF
}

spoil_cache() {
	python3 - "$1" "$2" <<'EOF'
import sys
path, how = sys.argv[1:3]
b = bytearray(open(path, "rb").read())
if how == "damaged":
    b[len(b) // 2] ^= 0xff
elif how == "truncated":
    b = b[:-8]
elif how == "tool":
    b[16] ^= 0xff
open(path, "wb").write(b)
EOF
}

cache_files() { find "$1" -maxdepth 1 -type f 2>/dev/null | grep -cE '/[0-9a-f]{32}$'; }
