# docs: the store's schema, the user guide, man pages.
dist_doc_DATA += docs/schema.md docs/guide.md docs/gpu.md docs/security.md
dist_man1_MANS += docs/collscope.1
