# docs: the design map, the store's schema, the user guide, security, man pages.
dist_doc_DATA += docs/schema.md docs/guide.md docs/gpu.md docs/design.md docs/security.md docs/fusion.md docs/analysis.md docs/hangs.md docs/scale.md docs/live.md \
	docs/gpusim.md docs/testing.md
dist_man1_MANS += docs/collscope.1
