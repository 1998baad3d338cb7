# Included by the plugin Makefiles (PLUGIN_SO = name.so). `make install`
# puts the .so into Slurm's PluginDir atomically: a temporary file in the
# same directory renamed over the old one, so a slurmctld that has the old
# one loaded keeps its (unlinked) copy mapped and never sees a half-written
# file (overwriting a loaded plugin in place crashes slurmctld).
install-exec-local: $(PLUGIN_SO:.so=.la)
	$(MKDIR_P) "$(DESTDIR)$(SLURM_PLUGINDIR)"
	@tmp="$(DESTDIR)$(SLURM_PLUGINDIR)/.$(PLUGIN_SO).$$$$" && \
	$(INSTALL_PROGRAM) -m 755 .libs/$(PLUGIN_SO) "$$tmp" && \
	mv -f "$$tmp" "$(DESTDIR)$(SLURM_PLUGINDIR)/$(PLUGIN_SO)" && \
	echo "installed $(DESTDIR)$(SLURM_PLUGINDIR)/$(PLUGIN_SO)"

uninstall-local:
	rm -f "$(DESTDIR)$(SLURM_PLUGINDIR)/$(PLUGIN_SO)"
