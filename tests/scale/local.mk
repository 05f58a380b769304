# A full node: 64 ranks X-operating on every other (benchmarks/scale), and
# endpoints on demand over TCP (tests/scale/test_scale.sh).
TESTS += tests/scale/test_scale.sh
EXTRA_DIST += tests/scale/test_scale.sh
