# collscope import (analyzer/import*.c): generated Kineto traces with known
# answers (tests/import/kineto_gen.py), bad input, and the real PyTorch
# samples where the torch helper's fixtures are present. The GPU time per
# rank of generated GPU traces (tests/import/gpu_gen.py) against the
# generator's truth and against HTA.
TESTS += tests/import/kineto.sh tests/import/bad_input.sh tests/import/tui.sh tests/import/gpu_breakdown.sh \
	tests/import/gpu_breakdown_hta.sh tests/import/gpu_diff.sh tests/import/gpu_kernels.sh
EXTRA_DIST += tests/import/kineto.sh tests/import/bad_input.sh tests/import/tui.sh tests/import/kineto_gen.py \
	tests/import/gpu_breakdown.sh tests/import/gpu_breakdown_hta.sh tests/import/gpu_gen.py tests/import/gpu_diff.sh tests/import/gpu_kernels.sh
# Clocks on generated traces: kept when one clock, a planted offset found, a
# clock no offset explains refused (an_align.c).
TESTS += tests/import/clocks.sh
EXTRA_DIST += tests/import/clocks.sh
# An import ended by a signal or killed leaves no temporary folder behind.
TESTS += tests/import/interrupted.sh
EXTRA_DIST += tests/import/interrupted.sh
# The slowdown on the GPU graph (an_gpu_graph.c) of generated Megatron-style
# traces (tests/import/gpu_pipe_gen.py) against the generator's truth.
TESTS += tests/import/gpu_slowdown.sh
EXTRA_DIST += tests/import/gpu_slowdown.sh tests/import/gpu_pipe_gen.py
# Bad values in collective records counted and left out, a reader out of
# memory named, FIFOs refused without waiting (issue 33, defects 4, 8, 9).
TESTS += tests/import/robust.sh
EXTRA_DIST += tests/import/robust.sh
