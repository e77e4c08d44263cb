"""Every figure of the paper: its id, the tables it reads and the function that draws it.

Kept free of heavy imports: the workflow reads it to build one rule per figure.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DATASET_FIGURES", "FIGURES", "PAPER_FIGURES", "Figure", "draw_figure"]


@dataclass(frozen=True)
class Figure:
    tables: tuple[
        str, ...
    ]  # names under results/tables/ ("ablation", "proteingym": one per dataset)
    module: str  # module of whcore.pipeline.figures holding the function, or a dotted module name
    function: str
    kwargs: dict = field(default_factory=dict)
    caption: str = ""

    @property
    def module_name(self) -> str:
        """The plotting module's import name."""
        return self.module if "." in self.module else f"{__package__}.{self.module}"

    @property
    def source(self) -> Path:
        """The plotting module's file (found without importing the module)."""
        return Path(importlib.util.find_spec(self.module_name).origin)

    @property
    def code(self) -> str:
        """The digest of the plotting code (the module and the figures' style.py): a rule
        param, so that a figure reruns when its code changes, and not when the checkout moves."""
        files = (self.source, Path(__file__).with_name("style.py"))
        return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()


def _fig(tables, module, function, caption, **kwargs) -> Figure:
    return Figure(tuple(tables), module, function, kwargs, caption)


FIGURES: dict[str, Figure] = {
    "fig1a_support_evolution": _fig(
        ["spectrum_epochs"],
        "spectrum",
        "support_evolution",
        "Learned amplitude of each target frequency (degree 1 to 5) during training.",
    ),
    "fig1b_spectrum_evolution": _fig(
        ["spectrum_heatmap"],
        "spectrum",
        "spectrum_evolution",
        "The whole spectrum (ordered by degree) during training, target spectrum beneath: "
        "mean absolute coefficient over every selected run (data seeds x training seeds) of the drawn "
        "g* at the figure's train size.",
    ),
    "fig2_sae_evolution": _fig(
        ["spectrum_epochs"],
        "spectrum",
        "sae_evolution",
        "Spectral approximation error on the target support and on the whole spectrum: the "
        "mean over every selected run (draws x data seeds x training seeds) at the figure's "
        "train size; no error bars.",
    ),
    "fig3_degree_sae_energy": _fig(
        ["spectrum_epochs"],
        "spectrum",
        "degree_sae_energy",
        "SAE and energy of the network's spectrum per degree during training: the median over "
        "runs, and behind it each run's SAE, faint (an evenly spaced sample where runs are many).",
    ),
    "fig4a_synthetic_r2": _fig(
        ["synthetic_summary"],
        "synthetic",
        "synthetic_r2",
        "Test R^2 on high-dimensional sparse synthetic functions vs train size c * 25n: the "
        "mean over the selected runs (data seeds x training seeds); error bars, one standard "
        "error of that mean over runs (the training seeds of a data seed share its data, so "
        "the bars understate the spread between subsamples).",
    ),
    "fig4b_synthetic_runtime": _fig(
        ["synthetic_curves", "synthetic_selected"],
        "synthetic",
        "synthetic_runtime",
        "Best test R^2 reached so far (running maximum) by epoch and by training time, and the "
        "early-stopped test R^2 vs total training time per model.",
    ),
    "fig5a_real_r2": _fig(
        ["real_summary"],
        "real",
        "real_r2",
        "Test R^2 vs train size on the four real datasets: the mean over the selected runs "
        "(data seeds x training seeds); error bars, one standard deviation over those runs.",
    ),
    "fig5b_real_runtime": _fig(
        ["real_summary"],
        "real",
        "real_runtime",
        "Training time per model vs train size on the dataset real.runtime_dataset (GB1 in the "
        "paper), named in the figure's title.",
    ),
    "fig5c_ablation": _fig(
        ["ablation"],
        "ablation",
        "ablation_figure",
        "Test R^2 of a random forest's exact spectrum as coefficients are removed, by "
        "degree and by amplitude: the mean over the forests (one per seed, each on its own "
        "split); shaded, their range (lowest to highest).",
    ),
    "fig5d_entacmaea_energy": _fig(
        ["entacmaea_energy"],
        "entacmaea_energy",
        "energy_figure",
        "Energy per degree among the top Entacmaea Fourier coefficients.",
    ),
    "figA1_support_evolution_sizes": _fig(
        ["spectrum_epochs"],
        "spectrum",
        "support_evolution",
        "Figure 1a for the other train sizes.",
        appendix=True,
    ),
    "figA2_spectrum_evolution_draws": _fig(
        ["spectrum_heatmap"],
        "spectrum",
        "spectrum_evolution",
        "Figure 1b for the other target draws.",
        appendix=True,
    ),
    "figA3_sae_evolution_sizes": _fig(
        ["spectrum_epochs"],
        "spectrum",
        "sae_evolution",
        "Figure 2 for the other train sizes.",
        appendix=True,
    ),
    "figA4_degree_sae_energy_sizes": _fig(
        ["spectrum_epochs"],
        "spectrum",
        "degree_sae_energy",
        "Figure 3 for the other train sizes.",
        appendix=True,
    ),
    "figA5_synthetic_r2_draws": _fig(
        ["synthetic_summary"],
        "synthetic",
        "synthetic_r2",
        "Figure 4a for every target draw (means and error bars as there).",
        appendix=True,
    ),
    "figA6_synthetic_runtime_all": _fig(
        ["synthetic_curves", "synthetic_selected"],
        "synthetic",
        "synthetic_runtime",
        "Figure 4b for every n and c of the first draw.",
        appendix=True,
    ),
    "figA7_real_r2_times": _fig(
        ["real_summary"],
        "real",
        "real_r2",
        "Figure 5a (means and error bars as there) with training times on a log axis (per "
        "model; where real.training stacks the networks of a job, a network's share of its "
        "stack's time, except on real.runtime_dataset).",
        with_times=True,
    ),
    "proteingym_spearman": _fig(
        ["proteingym"],
        "proteingym",
        "proteingym_spearman",
        "ProteinGym's supervised protocol on your datasets: mean Spearman correlation on the "
        "held-out folds per method and split scheme (random, modulo, contiguous), with its "
        "standard error over the folds.",
    ),
}

# Figures drawn once per dataset (their id and tables end in the dataset's name: epistasis_gb1).
DATASET_FIGURES: dict[str, Figure] = {
    "epistasis": _fig(
        ["epistasis", "epistasis_energy", "epistasis_sites"],
        "epistasis",
        "epistasis_figure",
        "Learned epistasis in sites: the energy of the selected standard and HashWH networks by "
        "number of sites, and the site-by-site heatmap of the pairwise interaction energy.",
    ),
}

# The paper's figures (the others are drawn for one's own datasets where a run asks for them).
PAPER_FIGURES = tuple(fid for fid, figure in FIGURES.items() if figure.module != "proteingym")


def draw_figure(figure_id: str, tables: dict, settings: dict):
    """Draw one figure from its tables ({name: DataFrame}); returns the matplotlib figure."""
    if figure_id not in FIGURES:
        raise ValueError(f"unknown figure {figure_id!r}; choose one of {sorted(FIGURES)}")
    from .style import NothingToShow, mark_run, note_figure

    fig = FIGURES[figure_id]
    module = importlib.import_module(fig.module_name)
    try:
        drawn = getattr(module, fig.function)(tables, settings, **fig.kwargs)
    except NothingToShow as reason:
        drawn = note_figure(str(reason))
    except KeyError as err:
        raise ValueError(
            f"figure {figure_id}: needs {err.args[0]!r}, a column of its tables "
            f"({', '.join(fig.tables)}) or a field of the spec's settings"
        ) from None
    mark_run(drawn, settings.get("run_name"))
    return drawn
