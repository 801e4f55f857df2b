# tests/report: what `collscope report`, `diff` and `--help` tell a reader
# (issue 36): the usage of `collscope --help` against each command's own
# --help and parser; the text report leading with the answer, one unit per
# column, names never cut mid-token, on the MPI demo trace and on an
# imported 16-rank GPU trace; every term it prints in docs/guide.md's
# glossary; diff's warning on runs that are not comparable and the base of
# its changes; the Markdown report's sections in the guide's order. check_report.py
# and glossary.py hold the checks every source's golden report passes
# (also run by tests/nccl/straggler.sh and tests/import/torch_ddp.sh).
TESTS += tests/report/help_parser.sh tests/report/answer.sh tests/report/run_untraced.sh tests/report/glossary.sh
# docs/guide.md's torchrun commands on a torchrun job on gloo (the venv's
# PyTorch): collscope run says why nothing was traced and exits 4, then
# the import it points to reports the slow rank.
TESTS += tests/report/run_torchrun.sh
EXTRA_DIST += tests/report/run_torchrun.sh tests/progs/torchrun_gloo.py
EXTRA_DIST += tests/report/help_parser.sh tests/report/answer.sh tests/report/run_untraced.sh tests/report/glossary.sh \
	tests/report/check_report.py tests/report/glossary.py
