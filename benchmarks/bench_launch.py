"""Many networks per launch: the HashWH training step at growing stack sizes, eager and graphed.

On a GPU a stacked HashWH step (forward on a minibatch, the penalty on 2^b hashed points,
backward, fused Adam) took 2.3-3.2 ms whatever its size (docs/cost.md): about a hundred kernel
launches set its time, not arithmetic. Two levers can lift that bound, and this measures both
before either is built into training:

- more networks per stack: a job today stacks 20 (4 lambdas x 5 seeds); a stack can also hold a
  cell's units (g* draws, data seeds), each member training on its own data (S, N, n);
- fewer launches per step: the whole step captured once as a CUDA graph and replayed.

For each case (a shape of the paper grid: input n, width, batch, b) and stack size S it times a
step three ways, one thread, members with their own data:

- ``eager``: the training loop's step (``whcore.core.training.step``) with today's regularizer,
  which draws sigma from one generator per member (S draws per step);
- ``eager_one_draw``: the same step with every member's sigma from one draw (the launch cost a
  counter-based per-member sampler would have: a few element-wise kernels, whatever S);
- ``graph`` (CUDA only): ``eager_one_draw`` captured as one CUDA graph (static batch indices, fused
  Adam with ``capturable=True``) and replayed; the batch indices are copied in before each replay.

Each row gives ms per step, network-steps per second and CPU-seconds per step (the host's share),
and the speed-up in network-steps per second over ``eager`` at the smallest S (today's job). The
graph is checked against eager on the same fixed hashing matrices (largest parameter difference
after 20 steps; float rounding only).

    python benchmarks/bench_launch.py [--device cuda] [--steps 50] [--cases spectrum,gb1]
                                      [--sizes 20,100,500] [--out launch.json]
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from whcore.core.models import MLP
from whcore.core.regularizers import Context, make_regularizer
from whcore.core.training import step

# name: (n, width, batch, b, train rows): the grid's HashWH jobs (config/config.yaml) -- the
# spectrum experiment, a synthetic n = 50 cell, GB1 and avGFP at their middle b.
CASES = {
    "spectrum": (10, 10, 16, 7, 200),
    "synthetic": (50, 2, 128, 10, 1000),
    "gb1": (80, 10, 16, 10, 1000),
    "avgfp": (236, 1, 16, 13, 1000),
}
LAM = 0.01


def _one_draw(reg):
    """Every member's sigma from one draw of the device's default generator."""

    def sample():
        torch.randint(0, 2, reg.sigma.shape, out=reg.sigma)
        return reg.sigma.transpose(0, 1)

    return sample


def _table(reg, table: torch.Tensor, counter: torch.Tensor):
    """sigma from a fixed table, indexed by a step counter on the device (graph-safe)."""

    def sample():
        torch.index_select(table, 0, (counter % len(table)).view(1), out=reg.sigma.unsqueeze(0))
        counter.add_(1)
        return reg.sigma.transpose(0, 1)

    return sample


class Job:
    """A stacked model, its HashWH regularizer, optimizer and per-member training data."""

    def __init__(self, case: str, size: int, device: torch.device, capturable: bool = False):
        n, width, self.batch, b, rows = CASES[case]
        gen = torch.Generator().manual_seed(0)
        self.x = torch.randint(0, 2, (size, rows, n), generator=gen).float().to(device)
        self.y = torch.randn(size, rows, generator=gen).to(device)
        self.model = MLP(n, width, seeds=range(size), device=device)
        ctx = Context(n, list(range(size)), device)
        self.reg = make_regularizer("hashwh", {"lam": LAM, "b": b}, ctx)
        options = {"capturable": True} if capturable else {}
        self.opt = torch.optim.Adam(self.model.parameters(), lr=0.01, fused=True, **options)
        self.members = torch.arange(size, device=device)[:, None]
        self.idx = torch.zeros(size, self.batch, dtype=torch.long, device=device)
        self.order = torch.Generator().manual_seed(1)
        self.rows = rows

    def next_batch(self) -> None:
        """The next minibatch's indices, copied into the static index buffer."""
        lo = torch.randint(0, self.rows - self.batch + 1, (1,), generator=self.order).item()
        self.idx.copy_(torch.arange(lo, lo + self.batch).expand_as(self.idx), non_blocking=True)

    def body(self) -> None:
        step(self.model, self.opt, self.reg, self.x[self.members, self.idx],
             self.y[self.members, self.idx])  # fmt: skip

    def capture(self) -> torch.cuda.CUDAGraph:
        """Warm up on a side stream, then capture one step (PyTorch's whole-network recipe)."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self.body()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        self.opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            self.captured_body()
        return graph

    def captured_body(self) -> None:
        # step() without its zero_grad: inside a graph the gradients captured are overwritten,
        # not accumulated, on every replay (they were None when captured).
        pred = self.model(self.x[self.members, self.idx])
        loss = ((pred - self.y[self.members, self.idx]) ** 2).mean(-1) + self.reg.penalty(
            self.model
        )
        loss.sum().backward()
        self.opt.step()


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_steps(run, device: torch.device, steps: int) -> tuple[float, float]:
    """(wall, CPU) seconds per step of ``run()`` after 5 warm-up steps."""
    for _ in range(5):
        run()
    _sync(device)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        run()
    _sync(device)
    return (time.perf_counter() - wall) / steps, (time.process_time() - cpu) / steps


def measure(case: str, size: int, variant: str, device: torch.device, steps: int) -> dict:
    job = Job(case, size, device, capturable=variant == "graph")
    if variant != "eager":
        job.reg.sample = _one_draw(job.reg)
    if variant == "graph":
        graph = job.capture()

        def run():
            job.next_batch()
            graph.replay()
    else:

        def run():
            job.next_batch()
            job.body()

    wall, cpu = time_steps(run, device, steps)
    return {
        "case": case,
        "n_width_batch_b_rows": CASES[case],
        "networks": size,
        "variant": variant,
        "ms_per_step": round(wall * 1e3, 3),
        "cpu_ms_per_step": round(cpu * 1e3, 3),
        "network_steps_per_s": round(size / wall, 1),
    }


def graph_difference(case: str, size: int, device: torch.device, steps: int = 20) -> float:
    """Largest parameter difference, graph against eager, after ``steps`` steps on the same
    batches and the same fixed hashing matrices (float rounding only)."""
    params = []
    for graphed in (False, True):
        job = Job(case, size, device, capturable=True)
        table_gen = torch.Generator().manual_seed(2)
        table = torch.randint(0, 2, (7, *job.reg.sigma.shape), generator=table_gen)
        counter = torch.zeros((), dtype=torch.long, device=device)
        job.reg.sample = _table(job.reg, table.float().to(device), counter)
        snapshot = [p.detach().clone() for p in job.model.parameters()]
        if graphed:
            graph = job.capture()  # its warm-up steps move the weights: start again from them
            counter.zero_()
            with torch.no_grad():
                for p, p0 in zip(job.model.parameters(), snapshot):
                    p.copy_(p0)
            for state in job.opt.state.values():
                for value in state.values():
                    value.zero_()  # step counts and moments back to a fresh optimizer's
            job.order.manual_seed(1)
            for _ in range(steps):
                job.next_batch()
                graph.replay()
        else:
            for _ in range(steps):
                job.next_batch()
                job.body()
        _sync(device)
        params.append([p.detach().clone() for p in job.model.parameters()])
    return max((a - b).abs().max().item() for a, b in zip(*params))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda", help="cuda, cuda:K or cpu (a rehearsal)")
    parser.add_argument("--steps", type=int, default=50, help="timed steps per row (50)")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated cases")
    parser.add_argument("--sizes", default="20,100,500", help="networks per stack (20,100,500)")
    parser.add_argument("--out", help="also write the rows here (JSON)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    device = torch.device(args.device)
    variants = ["eager", "eager_one_draw"] + (["graph"] if device.type == "cuda" else [])
    sizes = [int(s) for s in args.sizes.split(",")]
    rows, checks = [], []
    for case in args.cases.split(","):
        base = None
        for size in sizes:
            for variant in variants:
                try:
                    row = measure(case, size, variant, device, args.steps)
                except Exception as err:  # out of memory, or a capture PyTorch refuses: a row
                    row = {"case": case, "networks": size, "variant": variant, "error": repr(err)}
                if device.type == "cuda":
                    torch.cuda.empty_cache()
                base = base or row.get("network_steps_per_s")
                if "network_steps_per_s" in row:
                    row["speedup_vs_eager_smallest"] = round(row["network_steps_per_s"] / base, 2)
                rows.append(row)
                print(json.dumps(row), flush=True)
        if device.type == "cuda":
            try:
                diff = graph_difference(case, sizes[0], device)
            except Exception as err:  # the rows above still stand
                diff = repr(err)
            checks.append({"case": case, "networks": sizes[0], "graph_vs_eager_max_diff": diff})
            print(json.dumps(checks[-1]), flush=True)
    if args.out:
        meta = {"torch": torch.__version__, "device": str(device)}
        if device.type == "cuda":
            meta["card"] = torch.cuda.get_device_name(device)
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "rows": rows, "checks": checks}, f, indent=1)


if __name__ == "__main__":
    main()
