"""Canonical form: one spelling for equal settings, the tags that name grid points, YAML files.

A spec is compared, stored and passed as canonical JSON (integral numbers as integers, keys
sorted), so that equal settings written differently give one job. A method's grid expands to
its points, each named by a path-safe tag that never collides.
"""

from __future__ import annotations

import itertools
import json

import yaml

from ...core.methods import METHOD_INFO

__all__ = [
    "MAX_EXPANDED_VALUES",
    "canonical",
    "canonical_json",
    "method_grid",
    "param_tag",
    "read_yaml",
    "training_groups",
    "yaml_error_line",
]


def canonical(value):
    """``value`` with integral floats as ints (``4.0`` -> ``4``) and mappings' keys sorted, so
    that equal settings written differently give one spec."""
    if isinstance(value, dict):
        return {str(k): canonical(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)  # (beyond 2^53 a float is no count: 1e300 stays 1e+300)
    return value


def canonical_json(value) -> str:
    return json.dumps(canonical(value), sort_keys=True, separators=(",", ":"))


def param_tag(params: dict) -> str:
    """A path-safe, readable name for a hyperparameter point: b7_lam0.01. ``repr`` of a float
    round-trips, so two different values never share a tag."""
    if not params:
        return "default"
    return "_".join(f"{key}{_tag_value(value)}" for key, value in sorted(params.items()))


def _tag_value(value) -> str:
    return value if isinstance(value, str) else repr(canonical(value))


def method_grid(methods: dict) -> list[tuple[str, dict]]:
    """{method: {param: [values]}} -> [(method, {param: value})] over the cartesian product.
    A value equal to the method's default is left out, so writing a default out names the same
    job as leaving it implicit."""
    points = []
    for method, grid in methods.items():
        defaults = canonical(METHOD_INFO[method].defaults)
        keys = sorted(grid or {})
        for values in itertools.product(*(grid[k] for k in keys)):
            params = canonical(dict(zip(keys, values)))
            explicit = {k: v for k, v in params.items() if k not in defaults or defaults[k] != v}
            points.append((method, explicit))
    return points


def training_groups(methods: dict) -> list[tuple[str, str, list[dict]]]:
    """The configurations of ``method_grid`` in groups one job trains together: [(method,
    group tag, [params])], a group holding the configurations that differ only in the weights
    stacked members may differ in (``MethodInfo.per_member``: lam, rho)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for method, params in method_grid(methods):
        shared = {k: v for k, v in params.items() if k not in METHOD_INFO[method].per_member}
        groups.setdefault((method, param_tag(shared)), []).append(params)
    return [(method, tag, grid) for (method, tag), grid in groups.items()]


def yaml_error_line(source: str, err: Exception) -> str:
    """One line for a YAML syntax error in ``source`` (a file name): where (line and column, as
    an editor counts them) and what, instead of PyYAML's five lines naming "<unicode string>"."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = (getattr(err, "problem", None) or str(err).splitlines()[0]).strip()
    where = f"{source}, line {mark.line + 1}, column {mark.column + 1}" if mark else source
    context, context_mark = getattr(err, "context", None), getattr(err, "context_mark", None)
    if context and context_mark is not None and context_mark is not mark:
        problem += f" ({context.strip()} from line {context_mark.line + 1})"
    return f"{where}: not valid YAML: {problem}"


# A configuration holds hundreds of values, a spec fewer. An alias (*name) repeats its anchor's
# value, so a few nested aliases can stand for billions of values, which every later step
# (schema, checks, specs) would walk. A document whose aliases expand it beyond this is refused.
MAX_EXPANDED_VALUES = 100_000


class _ExpansionRefused(ValueError):
    """A YAML document whose aliases expand it past ``MAX_EXPANDED_VALUES`` values, or make a
    value contain itself."""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, checking the expansion of a document that uses aliases before it
    is constructed (composed, an alias is one shared node: nothing is expanded yet)."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliased = True
        return super().compose_node(parent, index)

    def construct_document(self, node):
        if getattr(self, "aliased", False):
            _expanded_size(node, "", {}, set())
        return super().construct_document(node)


def _children(node, key: str):
    """(key, child) of a composed node: ``a.b`` under a mapping, ``a[0]`` in a sequence."""
    if isinstance(node, yaml.MappingNode):
        for name, child in node.value:
            yield (f"{key}.{name.value}" if key else str(name.value)), child
    elif isinstance(node, yaml.SequenceNode):
        for i, child in enumerate(node.value):
            yield f"{key}[{i}]", child


def _expanded_size(node, key: str, sizes: dict, open_nodes: set) -> int:
    """The number of values ``node`` stands for with its aliases expanded, counted once per
    distinct node (``sizes``): linear in the document's size, however far it would expand."""
    if id(node) in sizes:
        return sizes[id(node)]
    if id(node) in open_nodes:
        _refuse(key, node, "contains itself")
    open_nodes.add(id(node))
    total = 1
    for child_key, child in _children(node, key):
        total += _expanded_size(child, child_key, sizes, open_nodes)
        if total > MAX_EXPANDED_VALUES:
            _refuse(key, node, f"expands to more than {MAX_EXPANDED_VALUES} values")
    open_nodes.discard(id(node))
    sizes[id(node)] = total
    return total


def _refuse(key: str, node, why: str):
    where = f"key {key}" if key else "the document"
    raise _ExpansionRefused(
        f"line {node.start_mark.line + 1}: {where} {why} through YAML aliases; "
        "write the value out without &anchors and *aliases"
    )


def read_yaml(path, what: str = "file", error: type[Exception] = ValueError):
    """The YAML (or JSON) document in ``path``; an unreadable file, a syntax error, aliases
    that expand it beyond ``MAX_EXPANDED_VALUES`` or nesting deeper than Python's recursion
    limit raise ``error`` in one line naming the file (and the line)."""
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.load(f, Loader=_BoundedLoader)
    except OSError as err:
        raise error(f"{path}: cannot read the {what} ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise error(yaml_error_line(str(path), err)) from None
    except _ExpansionRefused as err:
        raise error(f"{path}, {err}") from None
    except RecursionError:  # PyYAML composes nested values recursively
        raise error(f"{path}: the {what} nests its values too deeply to read") from None
