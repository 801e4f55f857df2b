# The reference GPU simulator (tests/gpusim/sim.py, docs/gpusim.md) checked
# against facts it did not compute: its traces, the pipeline formulas, HTA
# and collscope's GPU time (sim_facts.sh); collscope's slowdown answers on
# seven of its jobs, one per fault, against its truth (verdicts.sh, through
# check.py); two random imbalance jobs against the simulator's engine
# (imbalance.sh, imbalance_ref.py); a GPU trace whose CPU replay deadlocks
# (deadlock.sh, tie_swap.py); a slow first stage of two, whose ideal needs
# the imported kernels' launches (launch.sh). bench/gpusim_bench.sh runs check.py on
# 60 random jobs by hand.
TESTS += tests/gpusim/sim_facts.sh tests/gpusim/verdicts.sh tests/gpusim/imbalance.sh tests/gpusim/deadlock.sh \
  tests/gpusim/launch.sh
EXTRA_DIST += tests/gpusim/sim_facts.sh tests/gpusim/verdicts.sh tests/gpusim/imbalance.sh tests/gpusim/imbalance_ref.py \
  tests/gpusim/deadlock.sh tests/gpusim/launch.sh tests/gpusim/tie_swap.py tests/gpusim/sim.py tests/gpusim/sim_facts.py tests/gpusim/check.py
