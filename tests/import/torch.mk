# tests/import/torch.mk: `collscope import` of real PyTorch profiler traces:
# a 4-rank DDP job on gloo run here (tests/progs/ddp_gloo.py, in the
# project's venv, scripts/venv.sh) and a committed trace of an NCCL job
# (tests/data/kineto, with its origin and licence).
TESTS += tests/import/torch_ddp.sh tests/import/nccl_fixture.sh
EXTRA_DIST += tests/import/torch_ddp.sh tests/import/nccl_fixture.sh tests/progs/ddp_gloo.py \
	tests/data/kineto/README.md tests/data/kineto/LICENSE.HolisticTraceAnalysis \
	tests/data/kineto/nccl_2rank_rank0.json.gz scripts/venv.sh scripts/venv-requirements.txt
# Its straggler verdict and step times rest on the job's timing on the
# shared cores: it runs alone.
CS_SERIAL_TESTS += tests/import/torch_ddp.sh
