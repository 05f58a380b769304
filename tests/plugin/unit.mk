# unit tests of the image format, the ELF reader and xrdma-cc

# Test ifunc images, built by xrdma-cc at make check time. Other fragments
# append to TEST_IFUNC_IMAGES; each image is built from the .c of the same
# name (keep the sources in EXTRA_DIST).
TEST_IFUNC_IMAGES = tests/plugin/ifuncs/unit_two.xfn
EXTRA_DIST += tests/plugin/ifuncs/unit_two.c
check_DATA += $(TEST_IFUNC_IMAGES)
CLEANFILES += $(TEST_IFUNC_IMAGES)


check_PROGRAMS += tests/plugin/test_image tests/plugin/test_xrdma_cc
TESTS += tests/plugin/test_image tests/plugin/test_xrdma_cc

tests_plugin_test_image_SOURCES = tests/plugin/test_image.cc
tests_plugin_test_image_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tests_plugin_test_image_LDADD = libucx_ifunc.la $(GTEST_LIBS) -lgtest_main
tests_plugin_test_image_LDFLAGS = -no-install

# The runtime API a layer above extends (ucx_ifunc_register_runtime).
check_PROGRAMS += tests/plugin/test_runtime_api
TESTS += tests/plugin/test_runtime_api
tests_plugin_test_runtime_api_SOURCES = tests/plugin/test_runtime_api.cc
tests_plugin_test_runtime_api_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tests_plugin_test_runtime_api_LDADD = libucx_ifunc.la $(GTEST_LIBS) -lgtest_main
tests_plugin_test_runtime_api_LDFLAGS = -no-install -rdynamic

tests_plugin_test_xrdma_cc_SOURCES = tests/plugin/test_xrdma_cc.cc
tests_plugin_test_xrdma_cc_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tests_plugin_test_xrdma_cc_LDADD = libucx_ifunc.la $(GTEST_LIBS) -lgtest_main
tests_plugin_test_xrdma_cc_LDFLAGS = -no-install

# Sender internals: the table of invocations in flight (pending.h), the
# inline reply check against the full one (wire.h), a frame staged in a
# ring (ring.h), and where an entry was sent before (context.h: SendMemo).
check_PROGRAMS += tests/plugin/test_origin
TESTS += tests/plugin/test_origin
tests_plugin_test_origin_SOURCES = tests/plugin/test_pending.cc tests/plugin/test_wire.cc tests/plugin/test_ring.cc \
	tests/plugin/test_send_memo.cc
tests_plugin_test_origin_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tests_plugin_test_origin_LDADD = libucx_ifunc.la $(GTEST_LIBS) -lgtest_main
tests_plugin_test_origin_LDFLAGS = -no-install

# Library-list entries found as the link editor finds them (library_path.h).
check_PROGRAMS += tests/plugin/test_library_path
TESTS += tests/plugin/test_library_path
tests_plugin_test_library_path_SOURCES = tests/plugin/test_library_path.cc
tests_plugin_test_library_path_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tests_plugin_test_library_path_LDADD = libucx_ifunc.la $(GTEST_LIBS) -lgtest_main
tests_plugin_test_library_path_LDFLAGS = -no-install
