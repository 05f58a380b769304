# The documents a reader follows: every `name()` and XRDMA_* knob they
# mention exists in the sources (tests/docs/check-names), their links lead
# somewhere, and README.md's Quick start and example hold.
TESTS += tests/docs/test_architecture.sh tests/docs/test_guide.sh tests/docs/test_readme.sh
EXTRA_DIST += tests/docs/test_architecture.sh tests/docs/test_guide.sh tests/docs/test_readme.sh \
	tests/docs/check-names docs/ARCHITECTURE.md
