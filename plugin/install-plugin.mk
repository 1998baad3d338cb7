# Included by the plugin Makefiles (PLUGIN_SO = name.so). `make install`
# puts the .so into Slurm's PluginDir atomically: a temporary file in the
# same directory renamed over the old one, so a slurmctld that has the old
# one loaded keeps its (unlinked) copy mapped and never sees a half-written
# file (overwriting a loaded plugin in place crashes slurmctld).
# A plugin loads only into the Slurm it was built for (plugin_version is
# the exact major.minor.micro): installing it beside another one is refused.
install-exec-local: $(PLUGIN_SO:.so=.la)
	@installed=`$(SLURMCTLD) -V 2>/dev/null | awk '{print $$2}'`; \
	if test "x$$installed" != "x$(SLURM_VERSION_STR)"; then \
	  echo "make install: $(PLUGIN_SO) was built for Slurm $(SLURM_VERSION_STR) but the installed slurmctld ($(SLURMCTLD)) is $${installed:-missing}: slurmctld would refuse to load it. Rebuild against the installed Slurm's source (contrib/slurm-source/fetch; configure --with-slurm-source=DIR)." >&2; \
	  exit 1; \
	fi
	$(MKDIR_P) "$(DESTDIR)$(SLURM_PLUGINDIR)"
	@tmp="$(DESTDIR)$(SLURM_PLUGINDIR)/.$(PLUGIN_SO).$$$$" && \
	$(INSTALL_PROGRAM) -m 755 .libs/$(PLUGIN_SO) "$$tmp" && \
	mv -f "$$tmp" "$(DESTDIR)$(SLURM_PLUGINDIR)/$(PLUGIN_SO)" && \
	echo "installed $(DESTDIR)$(SLURM_PLUGINDIR)/$(PLUGIN_SO)"

uninstall-local:
	rm -f "$(DESTDIR)$(SLURM_PLUGINDIR)/$(PLUGIN_SO)"
