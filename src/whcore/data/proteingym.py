"""ProteinGym-format tables (``mutant``, ``mutated_sequence``, ``DMS_score``) of the single
mutants of GB1 and avGFP, built from the raw files this project reads, numbered as ProteinGym
numbers its assays ``SPG1_STRSG_Wu_2016`` and ``GFP_AEQVI_Sarkisyan_2016``.

What ProteinGym states about the two assays is in its reference file
``reference_files/DMS_substitutions.csv`` (OATML-Markslab/ProteinGym at bb68524):

``SPG1_STRSG_Wu_2016``
    the full 448-residue SPG1_STRSG sequence (``SPG1_TARGET``), mutated region 265-280, 76 single
    mutants, score ``Fitness`` (directionality 1). The raw file (FLIP's re-export of Wu et al.'s
    supplement) names the four sites 39, 40, 41 and 54 of the GB1 domain; residue 39 of the
    domain is residue 265 of SPG1_STRSG (``GB1_OFFSET`` = 226; V265, D266, G267, V280 in the
    target sequence). DMS_score is ``Fitness`` as the file has it.
``GFP_AEQVI_Sarkisyan_2016``
    the 238-residue avGFP sequence (``GFP_TARGET``), 1,084 single mutants, score
    ``mean_medianBrightness_per_aaseq`` (directionality 1). The raw file
    (``amino_acid_genotypes_to_brightness.tsv``) writes a mutation ``SA108D``: a leading ``S``,
    then the wild-type residue, a position counted from 0 at the residue after the initial
    methionine, the new residue; its position plus 2 is ProteinGym's (``GFP_OFFSET``; A110 in
    the target sequence). The file has one ``medianBrightness`` per amino-acid sequence, taken as
    DMS_score (the mean over one value); its singles with a stop (``*``) are left out, as
    ProteinGym leaves them: 1,084 remain, its count.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pandas as pd

__all__ = [
    "GB1_OFFSET",
    "GB1_SITES",
    "GFP_OFFSET",
    "GFP_TARGET",
    "SPG1_TARGET",
    "avgfp_singles",
    "gb1_singles",
]

SPG1_TARGET = (
    "MEKEKKVKYFLRKSAFGLASVSAAFLVGSTVFAVDSPIEDTPIIRNGGELTNLLGNSETTLALRNEESATADLTAAAVADTVAAAAAENA"
    "GAAAWEAAAAADALAKAKADALKEFNKYGVSDYYKNLINNAKTVEGIKDLQAQVVESAKKARISEATDGLSDFLKSQTPAEDTVKSIEL"
    "AEAKVLANRELDKYGVSDYHKNLINNAKTVEGVKELIDEILAALPKTDQYKLILNGKTLKGETTTEAVDAATAEKVFKQYANDNGVDGEW"
    "TYDDATKTFTVTEKPEVIDASELTPAVTTYKLVINGKTLKGETTTKAVDAETAEKAFKQYANDNGVDGVWTYDDATKTFTVTEMVTEVPG"
    "DAPTEPEKPEASIPLVPLTPATPIAKDDAKKDDTKKEDAKKPEAKKDDAKKAETLPTTGEGSNPFFTAAALAVMAGAGALAVASKRKED"
)
GFP_TARGET = (
    "MSKGEELFTGVVPILVELDGDVNGHKFSVSGEGEGDATYGKLTLKFICTTGKLPVPWPTLVTTLSYGVQCFSRYPDHMKQHDFFKSAMPE"
    "GYVQERTIFFKDDGNYKTRAEVKFEGDTLVNRIELKGIDFKEDGNILGHKLEYNYNSHNVYIMADKQKNGIKVNFKIRHNIEDGSVQLAD"
    "HYQQNTPIGDGPVLLPDNHYLSTQSALSKDPNEKRDHMVLLEFVTAAGITHGMDELYK"
)
GB1_SITES = (39, 40, 41, 54)  # the sites of the raw file's four-letter variants
GB1_OFFSET = 226  # GB1 domain residue + 226 = SPG1_STRSG residue
GFP_OFFSET = 2  # raw file position + 2 = ProteinGym position


def _table(target: str, mutants: list[tuple[str, int, str]], scores) -> pd.DataFrame:
    """The ProteinGym table of single mutants ``(wild, position from 1, new)``, each checked
    against the target sequence."""
    sequences = []
    for wild, position, new in mutants:
        if target[position - 1] != wild:
            raise ValueError(
                f"mutant {wild}{position}{new}: the target has {target[position - 1]} at "
                f"{position}. Fix: check the numbering offset"
            )
        sequences.append(target[: position - 1] + new + target[position:])
    names = [f"{w}{p}{n}" for w, p, n in mutants]
    return pd.DataFrame({"mutant": names, "mutated_sequence": sequences, "DMS_score": scores})


def gb1_singles(path: str | Path) -> pd.DataFrame:
    """The 76 single mutants of ``four_mutations_full_data.csv.zip`` as ProteinGym's
    ``SPG1_STRSG_Wu_2016`` (module docstring), in the file's order."""
    with zipfile.ZipFile(path) as archive:
        with archive.open("four_mutations_full_data.csv") as handle:
            raw = pd.read_csv(handle, usecols=["Variants", "HD", "Fitness"])
    raw = raw[raw["HD"] == 1]
    wild = "VDGV"
    mutants, scores = [], []
    for variant, fitness in zip(raw["Variants"], raw["Fitness"], strict=True):
        (site,) = [i for i in range(4) if variant[i] != wild[i]]
        mutants.append((wild[site], GB1_SITES[site] + GB1_OFFSET, variant[site]))
        scores.append(float(fitness))
    return _table(SPG1_TARGET, mutants, scores)


def avgfp_singles(path: str | Path) -> pd.DataFrame:
    """The 1,084 single mutants without a stop of ``amino_acid_genotypes_to_brightness.tsv``
    as ProteinGym's ``GFP_AEQVI_Sarkisyan_2016`` (module docstring), in the file's order."""
    raw = pd.read_csv(path, sep="\t", usecols=["aaMutations", "medianBrightness"])
    text = raw["aaMutations"].fillna("").astype(str)
    single = (text != "") & ~text.str.contains(":") & ~text.str.contains("*", regex=False)
    mutants = [(m[1], int(m[2:-1]) + GFP_OFFSET, m[-1]) for m in text[single]]
    return _table(GFP_TARGET, mutants, raw.loc[single, "medianBrightness"].astype(float).to_list())
