"""Paper figures drawn from small made-up tables: titles that fit, HashWH's hash sizes told
apart, log axes labelled at three values or more, integer c at integer ticks, legends off the
data, error bars that captions explain, Figure 3's per-run lines, human draw labels, and the
run that made a figure when it is not the paper's."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D

from whcore.pipeline.figures.registry import FIGURES, draw_figure
from whcore.pipeline.figures.style import curves_of, plt

SETTINGS = {
    "figure_train_size": 200,
    "figure_draw": 0,
    "runtime_n": 20,
    "runtime_c": 1,
    "runtime_dataset": "sgemm",
}
VARIANTS = [("standard", None), ("fullwh", None), ("ens", None), ("hashwh", 5), ("hashwh", 8)]
DEGREES = range(1, 6)


def _variant(method, b):
    return f"{method}_b{b}" if b is not None else method


def _spectrum_epochs(epochs=30, seeds=3, draws=2) -> pd.DataFrame:
    """Every run's SAE falls, then rises again from an epoch of its own (as the standard
    network's does in the paper); energies within a narrow range (under a decade)."""
    rng = np.random.default_rng(0)
    rows = []
    for method, b in VARIANTS:
        for size in (100, 200):
            for draw in range(draws):
                for seed in range(seeds):
                    turn = rng.integers(epochs // 4, epochs - epochs // 4)
                    for epoch in range(epochs):
                        row = dict(
                            dataset=f"draw{draw}",
                            variant=_variant(method, b),
                            method=method,
                            b=float("nan") if b is None else float(b),
                            train_size=size,
                            data_seed=0,
                            seed=seed,
                            epoch=epoch,
                            sae_support=1.0 / (1 + epoch),
                            sae_full=2.0 / (1 + epoch),
                        )
                        for d in DEGREES:
                            row[f"amp_deg{d}"] = min(1.0, epoch / epochs * d)
                            row[f"sae_deg{d}"] = 0.1 + 0.05 * abs(epoch - turn)
                            row[f"energy_deg{d}"] = 0.2 + 0.01 * epoch
                        rows.append(row)
    return pd.DataFrame(rows)


def _spectrum_heatmap(n=4, epochs=5) -> pd.DataFrame:
    rows = []
    for draw in ("draw0", "draw1"):
        target = {f"f{i}": float(i in (1, 3)) for i in range(2**n)}
        rows.append(
            dict(
                dataset=draw, variant="target", method="target", b=np.nan, epoch=0, runs=1, **target
            )
        )
        for method, b in VARIANTS:
            for epoch in range(epochs):
                coefs = {f"f{i}": 0.1 * (epoch + 1) * float(i in (1, 3)) for i in range(2**n)}
                rows.append(
                    dict(
                        dataset=draw,
                        variant=_variant(method, b),
                        method=method,
                        b=np.nan if b is None else float(b),
                        epoch=epoch,
                        runs=4,
                        **coefs,
                    )
                )
    return pd.DataFrame(rows)


def _synthetic_tables():
    curves, selected = [], []
    for method, b in [("standard", None), ("ens", None), ("hashwh", 7), ("hashwh", 10)]:
        for epoch in range(10):
            curves.append(
                dict(
                    draw=0,
                    n=20,
                    c=1,
                    variant=_variant(method, b),
                    method=method,
                    b=np.nan if b is None else float(b),
                    epoch=epoch,
                    cum_time=1.5 + 0.2 * epoch,
                    max_test_r2=0.1 * epoch,
                )
            )
        selected.append(
            dict(
                draw=0,
                n=20,
                c=1,
                variant=_variant(method, b),
                method=method,
                b=np.nan if b is None else float(b),
                train_time=2.0 + 0.3 * (b or 1),
                test_r2=0.5,
                diverged=False,
            )
        )
    return {"synthetic_curves": pd.DataFrame(curves), "synthetic_selected": pd.DataFrame(selected)}


def _real_summary():
    rows = []
    for dataset in ("sgemm", "gb1"):
        for method in ("standard", "hashwh", "lasso"):
            for size in (20, 40):
                rows.append(
                    dict(
                        dataset=dataset,
                        variant=method,
                        method=method,
                        train_size=size,
                        mean=0.5,
                        std=0.1,
                        train_time=3.0 + size / 10,
                    )
                )
    return pd.DataFrame(rows)


def _synthetic_summary():
    rows = []
    for n, c, (method, b) in itertools.product(
        (20, 50), (1, 2, 5), [("standard", None), ("hashwh", 7)]
    ):
        rows.append(
            dict(
                n=n,
                c=c,
                draw=0,
                variant=_variant(method, b),
                method=method,
                b=np.nan if b is None else float(b),
                mean=0.1 * c,
                sem=0.02,
            )
        )
    return pd.DataFrame(rows)


def _ablation(dataset):
    rows = []
    for seed, order, step in itertools.product(range(3), ("amplitude", "degree"), range(4)):
        pruned = 0.05 * step if order == "amplitude" else 0.25 * step
        rows.append(
            dict(
                dataset=dataset,
                seed=seed,
                order=order,
                step=step,
                kept=100 - 25 * step,
                test_r2=0.9 - pruned,
                n_coefficients=100,
                forest_test_r2=0.9,
            )
        )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def tables():
    return {
        "spectrum_epochs": _spectrum_epochs(),
        "spectrum_heatmap": _spectrum_heatmap(),
        "real_summary": _real_summary(),
        "synthetic_summary": _synthetic_summary(),
        "ablation_entacmaea": _ablation("entacmaea"),
        "ablation_sgemm": _ablation("sgemm"),
        **_synthetic_tables(),
    }


def _tables_of(figure_id, tables):
    """The tables a figure reads ("ablation": every ablation table)."""
    return {
        name: frame
        for name, frame in tables.items()
        if any(name.startswith(wanted) for wanted in FIGURES[figure_id].tables)
    }


def _draw(figure_id, tables):
    fig = draw_figure(figure_id, tables, SETTINGS)
    fig.canvas.draw()  # lay out: titles, ticks and labels as saved
    return fig


def _labelled_ticks(axis) -> list[str]:
    low, high = sorted(axis.get_view_interval())
    return [
        tick.get_text()
        for tick, value in zip(axis.get_ticklabels(), axis.get_ticklocs())
        if tick.get_text() and low <= value <= high
    ]


def test_fig5b_names_no_dataset_and_titles_the_configured_one(tables):
    assert "fig5b_real_runtime" in FIGURES and "fig5b_gb1_runtime" not in FIGURES
    caption = FIGURES["fig5b_real_runtime"].caption
    assert "real.runtime_dataset" in caption and "on GB1" not in caption
    fig = _draw("fig5b_real_runtime", tables)
    assert "SGEMM" in fig.axes[0].get_title()
    plt.close(fig)


@pytest.mark.parametrize(
    "figure_id",
    [
        "fig3_degree_sae_energy",
        "fig4b_synthetic_runtime",
        "fig5b_real_runtime",
        "fig2_sae_evolution",
    ],
)
def test_every_log_axis_is_labelled_at_three_values_or_more(tables, figure_id):
    """The made-up ranges are under a decade: powers of ten alone would label one or none."""
    fig = _draw(figure_id, tables)
    log_axes = [
        axis for ax in fig.axes for axis in (ax.xaxis, ax.yaxis) if axis.get_scale() == "log"
    ]
    assert log_axes
    for axis in log_axes:
        assert len(_labelled_ticks(axis)) >= 3, (figure_id, _labelled_ticks(axis))
    plt.close(fig)


@pytest.mark.parametrize(
    ("low", "high"),
    [
        (0.3, 0.9),
        (1.02, 1.3),
        (2e-5, 7e-5),
        (1e-3, 10.0),
        (150.0, 240.0),
        (0.905, 0.99),
        (0.05, 0.5),
        (0.01, 1.0),
    ],
)
def test_log_ticks_label_three_values_on_any_range(low, high):
    fig, ax = plt.subplots()
    ax.plot([1, 2], [low, high])
    ax.set_yscale("log")
    ax.set_ylim(low, high)
    from whcore.pipeline.figures.style import readable_log_axes

    readable_log_axes(fig)
    fig.canvas.draw()
    assert len(_labelled_ticks(ax.yaxis)) >= 3
    plt.close(fig)


def test_fig4a_ticks_c_at_its_integer_values_only(tables):
    fig = _draw("fig4a_synthetic_r2", tables)
    for ax in fig.axes:
        assert _labelled_ticks(ax.xaxis) == ["1", "2", "5"]
    plt.close(fig)


@pytest.mark.parametrize("datasets", [["entacmaea"], ["entacmaea", "sgemm"]])
def test_fig5c_keeps_its_legend_off_the_curves(tables, datasets):
    chosen = {f"ablation_{name}": tables[f"ablation_{name}"] for name in datasets}
    fig = _draw("fig5c_ablation", chosen)
    renderer = fig.canvas.get_renderer()
    legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert len(legends) == 1
    box = legends[0].get_window_extent(renderer)
    assert not any(box.overlaps(ax.get_window_extent(renderer)) for ax in fig.axes)
    plt.close(fig)


@pytest.mark.parametrize(
    "figure_id",
    [
        "fig4a_synthetic_r2",
        "figA5_synthetic_r2_draws",
        "fig5a_real_r2",
        "figA7_real_r2_times",
        "fig5c_ablation",
    ],
)
def test_a_caption_says_what_its_error_bars_and_bands_are(tables, figure_id):
    fig = _draw(figure_id, _tables_of(figure_id, tables))
    bars = any(ax.containers for ax in fig.axes)
    bands = any(isinstance(c, PolyCollection) for ax in fig.axes for c in ax.collections)
    caption = FIGURES[figure_id].caption
    assert bars or bands
    assert not bars or "error bars" in caption, caption
    assert not bands or "shaded" in caption, caption
    plt.close(fig)


def test_a_figure_of_another_run_than_the_papers_says_so(tables):
    def marks(run):
        fig = draw_figure("fig2_sae_evolution", tables, {**SETTINGS, "run_name": run})
        texts = [text.get_text() for text in fig.texts]
        plt.close(fig)
        return [text for text in texts if "not the paper's configuration" in text]

    assert marks("quick") == ["run 'quick': not the paper's configuration, nor its numbers"]
    assert marks("paper") == []


def test_hashwh_hash_sizes_differ_in_colour_and_line_style(tables):
    curves = [c for c in curves_of(tables["spectrum_epochs"]) if c.variant.startswith("hashwh")]
    assert len(curves) == 2
    assert curves[0].color != curves[1].color and curves[0].style != curves[1].style
    others = {c.color for c in curves_of(tables["spectrum_epochs"]) if c not in curves}
    assert not others & {c.color for c in curves}


def test_fig3_draws_each_run_faint_behind_the_medians(tables):
    fig = _draw("fig3_degree_sae_energy", tables)
    runs = 2 * 3  # draws x seeds at the figure's train size
    axes = np.array(fig.axes[: 2 * len(DEGREES)]).reshape(2, len(DEGREES))
    for ax in axes[0]:  # SAE: one faint line per run and curve, then the medians
        lines = [line for line in ax.get_lines() if isinstance(line, Line2D)]
        assert len(lines) == len(VARIANTS) * (runs + 1)
        faint = [line for line in lines if (line.get_alpha() or 1) < 1]
        assert len(faint) == len(VARIANTS) * runs
        assert max(line.get_zorder() for line in faint) < min(
            line.get_zorder() for line in lines if line not in faint
        )
    for ax in axes[1]:  # energy: medians only
        assert len(ax.get_lines()) == len(VARIANTS)
    plt.close(fig)


def test_fig3_caps_the_run_lines_per_curve(tables):
    from whcore.pipeline.figures import spectrum

    many = _spectrum_epochs(epochs=8, seeds=20, draws=2)
    fig = draw_figure("fig3_degree_sae_energy", {"spectrum_epochs": many}, SETTINGS)
    faint = [line for line in fig.axes[0].get_lines() if (line.get_alpha() or 1) < 1]
    assert len(faint) == len(VARIANTS) * spectrum.MAX_RUN_LINES
    assert f"{spectrum.MAX_RUN_LINES} of 40 runs" in fig._suptitle.get_text()
    plt.close(fig)


@pytest.mark.parametrize("figure_id", ["fig1a_support_evolution", "fig1b_spectrum_evolution"])
def test_heatmap_titles_never_overlap(tables, figure_id):
    """Ten columns of heatmaps: no two column titles share a pixel."""
    many = dict(tables)
    for name in ("spectrum_epochs", "spectrum_heatmap"):
        frame = tables[name]
        extra = frame[frame["method"] == "hashwh"].copy()
        parts = [frame]
        for b in (7, 10, 13, 16, 20):
            more = extra[extra["b"] == 5].assign(b=float(b), variant=f"hashwh_b{b}")
            parts.append(more)
        many[name] = pd.concat(parts, ignore_index=True)
    fig = _draw(figure_id, many)
    renderer = fig.canvas.get_renderer()
    boxes = sorted(
        (ax.title.get_window_extent(renderer) for ax in fig.axes if ax.get_title()),
        key=lambda box: box.x0,
    )
    assert len(boxes) == 10
    for left, right in zip(boxes, boxes[1:]):
        assert left.x1 < right.x0, (left, right)
    plt.close(fig)


def test_fig1b_labels_draws_for_people(tables):
    for figure_id, expected in [
        ("fig1b_spectrum_evolution", ["draw 1"]),
        ("figA2_spectrum_evolution_draws", ["draw 2"]),
    ]:
        fig = _draw(figure_id, tables)
        labels = [ax.get_ylabel() for ax in fig.axes if ax.get_ylabel().startswith("epoch")]
        assert [label.split(", ")[-1].rstrip(")") for label in labels] == expected
        assert not any("draw0" in label or "draw1" in label for label in labels)
        plt.close(fig)


def test_draws_are_numbered_from_one_in_every_figure():
    from whcore.pipeline.figures.style import draw_label

    assert draw_label("draw0") == draw_label(0) == "draw 1"
    assert draw_label(2) == "draw 3" and draw_label("target") == "target"
