"""Every environment variable whcore reads is checked at start and refused in one line."""

import pytest

from whcore.pipeline.cli import main
from whcore.pipeline.execution.environment import (
    VARIABLES,
    EnvironmentValueError,
    check_environment,
)

GOOD = {
    "WHCORE_DEVICE": ["auto", "cpu", "cuda", "cuda:1"],
    "WHCORE_LOG_EVERY": ["0", "10"],
    "WHCORE_SNAKEMAKE_PID": ["", "1234"],
    "WHCORE_FWHT": ["auto", "torch"],
    "WHCORE_TEST_URL_BASE": ["", "http://127.0.0.1:8000"],
    "WHCORE_SLURM_WAIT_MINUTES": ["", "0", "1440"],
}
BAD = {
    "WHCORE_DEVICE": ["gpu", "cuda:x"],
    "WHCORE_LOG_EVERY": ["ten", "-1", "1.5"],
    "WHCORE_SNAKEMAKE_PID": ["abc"],
    "WHCORE_FWHT": ["fast"],
    "WHCORE_TEST_URL_BASE": ["ftp://x"],
    "WHCORE_SLURM_WAIT_MINUTES": ["12h", "-1", "1.5"],
}


def test_every_variable_has_good_and_bad_cases():
    assert set(GOOD) == set(BAD) == set(VARIABLES)


@pytest.mark.parametrize("name,value", [(n, v) for n, vs in GOOD.items() for v in vs])
def test_good_values_pass(name, value):
    check_environment({name: value})


@pytest.mark.parametrize("name,value", [(n, v) for n, vs in BAD.items() for v in vs])
def test_bad_values_are_refused_naming_the_variable(name, value):
    with pytest.raises(EnvironmentValueError) as err:
        check_environment({name: value})
    assert str(err.value).startswith(f"environment variable {name}={value!r}: use ")


def test_a_bad_variable_stops_every_command_in_one_line(monkeypatch, capsys):
    monkeypatch.setenv("WHCORE_LOG_EVERY", "ten")
    assert main(["describe", "entacmaea", "--data", "missing.parquet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("whcore: error: environment variable WHCORE_LOG_EVERY='ten'")
    assert err.count("\n") == 1 and "Traceback" not in err
