# docs/ARCHITECTURE.md: every `name()` it mentions exists in the sources.
TESTS += tests/docs/test_architecture.sh
EXTRA_DIST += tests/docs/test_architecture.sh docs/ARCHITECTURE.md
