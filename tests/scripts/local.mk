# The tree's shell scripts (scripts/, benchmarks/drivers/, the test runners):
# ShellCheck at severity warning.
TESTS += tests/scripts/test_shellcheck.sh
EXTRA_DIST += tests/scripts/test_shellcheck.sh
