# xrdma_info: versions, transports, topology, and every knob documented
TESTS += tests/plugin/test_info.sh
EXTRA_DIST += tests/plugin/test_info.sh
