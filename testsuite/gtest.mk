# Included by each testsuite/<component>/Makefile.am that has GoogleTest
# programs. Set GTESTS, GTEST_LABEL (default unit) and optionally
# GTEST_TIMEOUT; `make check` builds them and writes gtest-tests.cmake,
# which the folder's CTestTestfile.cmake includes.
GTEST_LABEL ?= unit
GTEST_TIMEOUT ?= 300
check_PROGRAMS = $(GTESTS)
GTEST_CPPFLAGS = -I$(top_srcdir)/libgoodput/include -I$(top_srcdir)/spool/include $(GTEST_CFLAGS) $(GMOCK_CFLAGS)
GTEST_LDADD = $(GTEST_LIBS) $(GMOCK_LIBS) -lgtest_main $(PTHREAD_LIBS)

gtest-tests.cmake: $(GTESTS) $(top_srcdir)/build-aux/gtest-ctest
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/build-aux/gtest-ctest $(GTEST_LABEL) $(GTEST_TIMEOUT) \
	  $(addprefix $(abs_builddir)/,$(GTESTS)) > $@.tmp && mv $@.tmp $@

check-local: gtest-tests.cmake
CLEANFILES = gtest-tests.cmake
