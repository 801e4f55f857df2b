# tests/live: collscope top and the live metrics (analyzer/live, docs/live.md)
# on real Open MPI jobs of tests/progs/live_steps.
TESTS += tests/live/top.sh tests/live/top_tmux.sh tests/live/prometheus.sh tests/live/hang.sh tests/live/comm_alarm.sh tests/live/run_top_tmux.sh \
	tests/live/stage_alarm.sh tests/live/link_alarm.sh tests/live/proxy.sh
EXTRA_DIST += tests/live/livelib.sh tests/live/top.sh tests/live/top_tmux.sh tests/live/prometheus.sh tests/live/hang.sh tests/live/comm_alarm.sh tests/live/run_top_tmux.sh \
	tests/live/stage_alarm.sh tests/live/link_alarm.sh tests/live/proxy.sh
# A communicator's alarm rests on its calls' time once all members are in
# them, which 4 ranks on 2 shared cores lose to other tests' load (a clean
# job's world, or half0, alarmed beside the suite's other tests): alone.
CS_SERIAL_TESTS += tests/live/comm_alarm.sh
# Stage and link alarms judge the steps' timing too (a stage's own time,
# a link's transfers against a loaded machine's noise): alone.
CS_SERIAL_TESTS += tests/live/stage_alarm.sh tests/live/link_alarm.sh
# top.sh's alarm must name the step a rank turned slow within 10 steps: a
# CI run beside another session's benchmarks named it 18 late (1.7x where
# it is 3x quiet): alone.
CS_SERIAL_TESTS += tests/live/top.sh
