"""benchmarks/compare_runs.py: two runs' tables agree but for their timing columns, or it says
where they do not."""

from __future__ import annotations

import importlib.util

import pandas as pd
from conftest import REPO


def _script():
    spec = importlib.util.spec_from_file_location(
        "compare_runs", REPO / "benchmarks" / "compare_runs.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(root, test_r2, epoch_time):
    (root / "tables").mkdir(parents=True)
    frame = pd.DataFrame({"method": ["hashwh"], "test_r2": [test_r2], "epoch_time": [epoch_time]})
    frame.to_parquet(root / "tables" / "real_selected.parquet")
    return str(root)


def test_tables_equal_but_for_times_pass_and_a_changed_number_fails(tmp_path, capsys):
    compare = _script()
    before = _run(tmp_path / "a", 0.5, 1.0)
    assert compare.main(["tables", before, _run(tmp_path / "b", 0.5, 2.0)]) == 0
    assert "1 of 1 tables identical" in capsys.readouterr().out
    assert compare.main(["tables", before, _run(tmp_path / "c", 0.5000001, 1.0)]) == 1
    assert "real_selected.parquet" in capsys.readouterr().out
    (tmp_path / "c" / "tables" / "extra.csv").write_text("a\n1\n")
    assert compare.main(["tables", before, str(tmp_path / "c")]) == 1
    assert "only in the second run: tables/extra.csv" in capsys.readouterr().out


def test_timing_columns_are_those_of_measured_time():
    compare = _script()
    assert all(map(compare.timing, ["epoch_time", "fit_time", "time_to_best", "reg_time"]))
    assert not any(map(compare.timing, ["test_r2", "timed_alone", "epoch", "stack_size"]))
