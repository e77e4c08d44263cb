"""The README's code examples run as written."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(section: str) -> list[str]:
    text = README.read_text()
    start = text.index(section)
    end = text.find("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start : end if end > 0 else None], re.DOTALL)


def test_hashwh_training_loop_example():
    (code,) = python_blocks("## Use HashWH in your own training loop")
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    # The parity has variance 1: a network that did not learn it stays near an MSE of 1.
    assert scope["loss"].item() < 0.5
