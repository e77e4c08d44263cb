"""GPU claiming (whcore.pipeline.execution.gpus): flock-based, one job per device, no GPU needed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest
import torch

from whcore.core import devices
from whcore.pipeline.execution import gpus
from whcore.pipeline.execution.gpus import choose_device, claim_gpu

# A separate process that claims a device, prints its index and holds the lock until its stdin
# closes (or it is killed).
HOLDER = """
import sys
from whcore.pipeline.execution.gpus import claim_gpu
index, handle = claim_gpu(int(sys.argv[1]), sys.argv[2], log=lambda m: print('LOG', m))
print(index, handle is not None, flush=True)
sys.stdin.read()
"""


@pytest.fixture(autouse=True)
def all_devices_visible(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


def start_holder(count: int, lock_dir) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(count), str(lock_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    index, locked = proc.stdout.readline().split()
    assert locked == "True", "the holder should have got a lock of its own"
    return proc, int(index)


def stop(proc: subprocess.Popen) -> None:
    proc.stdin.close()
    proc.wait(timeout=30)


def test_separate_processes_get_different_devices_then_share(tmp_path):
    first, a = start_holder(2, tmp_path)
    second, b = start_holder(2, tmp_path)
    try:
        assert {a, b} == {0, 1}
        messages: list[str] = []
        index, handle = claim_gpu(2, tmp_path, wait_s=0, log=messages.append)
        assert handle is None
        assert index == os.getpid() % 2
        assert len(messages) == 1
        assert "2 GPUs" in messages[0] and "more jobs than devices" in messages[0]
        assert "--resources gpu=" in messages[0]
    finally:
        stop(first)
        stop(second)


def test_lock_released_when_holder_is_killed(tmp_path):
    holder, index = start_holder(1, tmp_path)
    assert index == 0
    # Held: a claim now falls back to sharing.
    assert claim_gpu(1, tmp_path, wait_s=0, log=lambda m: None)[1] is None
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    index, handle = claim_gpu(1, tmp_path, wait_s=5, log=pytest.fail)
    assert index == 0 and handle is not None
    handle.close()


def test_waiting_claim_gets_device_freed_meanwhile(tmp_path):
    holder, _ = start_holder(1, tmp_path)
    killer = subprocess.Popen(["sh", "-c", f"sleep 0.5; kill -9 {holder.pid}"])
    index, handle = claim_gpu(1, tmp_path, wait_s=20, log=pytest.fail)
    killer.wait(timeout=30)
    holder.wait(timeout=30)
    assert index == 0 and handle is not None
    handle.close()


def test_hostname_subfolder(tmp_path, monkeypatch):
    monkeypatch.setattr(socket, "gethostname", lambda: "nodeA")
    index, on_a = claim_gpu(1, tmp_path)
    lock = tmp_path / "nodeA" / f"gpu{index}.lock"
    assert lock.exists()
    assert lock.read_text().strip() == str(os.getpid())
    # Another node's gpu0 is a different device: nodeA's lock must not block it.
    monkeypatch.setattr(socket, "gethostname", lambda: "nodeB")
    _, on_b = claim_gpu(1, tmp_path, wait_s=0, log=pytest.fail)
    assert on_b is not None and (tmp_path / "nodeB" / "gpu0.lock").exists()
    on_a.close()
    on_b.close()


@pytest.mark.parametrize("count", [0, -1])
def test_claim_needs_a_device(tmp_path, count):
    with pytest.raises(ValueError, match="at least one device"):
        claim_gpu(count, tmp_path)


@pytest.fixture
def fake_cuda(monkeypatch):
    """Set the CUDA devices choose_device sees: fake_cuda(n), n=0 meaning no CUDA."""
    monkeypatch.setattr(gpus, "_HELD", {})
    current = []
    monkeypatch.setattr(gpus, "_set_current", current.append)

    def set_count(n: int) -> None:
        monkeypatch.setattr(devices, "_cuda_available", lambda: n > 0)
        monkeypatch.setattr(gpus, "_cuda_count", lambda: n)

    set_count.current = current  # the devices made current, in order
    return set_count


def test_choose_device_without_cuda(fake_cuda, tmp_path):
    fake_cuda(0)
    assert choose_device("cpu", tmp_path) == torch.device("cpu")
    assert choose_device("auto", tmp_path) == torch.device("cpu")
    with pytest.raises(ValueError, match="'cuda' was requested but CUDA is not available"):
        choose_device("cuda", tmp_path)
    with pytest.raises(ValueError, match="CUDA is not available"):
        choose_device("cuda:1", tmp_path)
    with pytest.raises(ValueError, match="unknown device"):
        choose_device("gpu", tmp_path)


def test_choose_device_single_gpu_takes_no_lock(fake_cuda, tmp_path):
    fake_cuda(1)
    locks = tmp_path / "locks"
    assert choose_device("auto", locks) == torch.device("cuda", 0)
    assert choose_device("cuda", locks) == torch.device("cuda", 0)
    assert not locks.exists()


def test_choose_device_explicit_index(fake_cuda, tmp_path):
    fake_cuda(4)
    assert choose_device("cuda:3", tmp_path / "locks") == torch.device("cuda", 3)
    assert not (tmp_path / "locks").exists()


def test_choose_device_several_gpus_claims_one(fake_cuda, tmp_path, monkeypatch):
    monkeypatch.setattr(socket, "gethostname", lambda: "node")
    fake_cuda(4)
    device = choose_device("auto", tmp_path, log=pytest.fail)
    assert device.type == "cuda" and device.index in range(4)
    assert (tmp_path / "node" / f"gpu{device.index}.lock").exists()
    assert fake_cuda.current == [device]  # the claimed GPU is also the current device
    # The claim is held (another process could not take it) and reused by a second call.
    assert choose_device("cuda", tmp_path, log=pytest.fail) == device
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, pathlib; from whcore.pipeline.execution.gpus import _try_lock;"
            "print(_try_lock(pathlib.Path(sys.argv[1])) is None)",
            str(tmp_path / "node" / f"gpu{device.index}.lock"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == "True"


def test_jobs_with_different_visible_devices_never_block_each_other(tmp_path, monkeypatch):
    """Two SLURM jobs on one node each see their own GPUs as cuda:0 and cuda:1; the locks name
    the physical devices (CUDA_VISIBLE_DEVICES), so both jobs get a device of their own."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    first = [claim_gpu(2, tmp_path, log=pytest.fail) for _ in range(2)]
    assert sorted(index for index, _ in first) == [0, 1]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,GPU-3f2a")
    second = [claim_gpu(2, tmp_path, log=pytest.fail) for _ in range(2)]
    assert all(handle is not None for _, handle in second)
    host = tmp_path / socket.gethostname()
    assert sorted(p.name for p in host.iterdir()) == [
        "gpu0.lock",
        "gpu1.lock",
        "gpu2.lock",
        "gpuGPU-3f2a.lock",
    ]
    # the same visible set as the first job: everything is taken
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    warnings = []
    assert claim_gpu(2, tmp_path, log=warnings.append)[1] is None and warnings
    for _, handle in first + second:
        handle.close()
