# The benchmarks' tools: the count of code lines and pages a hop runs
# through (benchmarks/drivers/code-footprint), and how ring_take() batched frames
# in a profile (benchmarks/drivers/hop-batching).
TESTS += tests/benchmarks/test_code_footprint.sh tests/benchmarks/test_hop_batching.sh
EXTRA_DIST += tests/benchmarks/test_code_footprint.sh tests/benchmarks/test_hop_batching.sh tests/benchmarks/callgrind_lib.sh
