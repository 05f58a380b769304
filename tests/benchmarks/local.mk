# The benchmarks' tools: the count of code lines and pages a hop runs
# through (benchmarks/code-footprint).
TESTS += tests/benchmarks/test_code_footprint.sh
EXTRA_DIST += tests/benchmarks/test_code_footprint.sh
