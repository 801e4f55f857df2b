# The reference GPU simulator (tests/gpusim/sim.py, docs/gpusim.md) checked
# against facts it did not compute: its traces, the pipeline formulas, HTA
# and collscope's GPU time (sim_facts.sh). check.py (collscope's slowdown
# answers against its truth) and bench/gpusim_bench.sh are run by hand.
TESTS += tests/gpusim/sim_facts.sh
EXTRA_DIST += tests/gpusim/sim_facts.sh tests/gpusim/sim.py tests/gpusim/sim_facts.py tests/gpusim/check.py
