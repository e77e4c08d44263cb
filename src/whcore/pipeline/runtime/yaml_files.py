"""YAML files from others (configs, hand specs) read within bounds: one line for a syntax error
or a key written twice, and a document whose aliases would expand it beyond
``MAX_EXPANDED_VALUES`` refused.
"""

from __future__ import annotations

import yaml

__all__ = ["MAX_EXPANDED_VALUES", "read_yaml", "yaml_error_line"]


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

    def construct_mapping(self, node, deep=False):
        """A key written twice is refused (PyYAML keeps the last one silently: a value the
        user wrote would be dropped without a word)."""
        if isinstance(node, yaml.MappingNode):
            first = {}
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if key.value in first:
                        raise yaml.constructor.ConstructorError(
                            None,
                            None,
                            f"duplicate key {key.value!r} (first at line {first[key.value] + 1}; "
                            "only one of them would be read: keep one)",
                            key.start_mark,
                        )
                    first[key.value] = key.start_mark.line
        return super().construct_mapping(node, deep)


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


# The key that makes Snakemake read a config file as a YTE template: Python run as it loads it.
YTE_KEY = "__use_yte__"


def _refuse_template(path, document, what: str, error: type[Exception]):
    """``document``, unless it is a mapping carrying ``YTE_KEY``: then ``error`` in one line."""
    if isinstance(document, dict) and YTE_KEY in document:
        raise error(
            f"{path}: carries {YTE_KEY}, which makes the {what} a template whose expressions "
            "Snakemake runs as Python code when it reads it; this project takes none. Fix: write "
            f"the values out and remove {YTE_KEY} (and never pass a file you do not trust)"
        )
    return document


def read_yaml(path, what: str = "file", error: type[Exception] = ValueError):
    """The YAML (or JSON) document in ``path``; an unreadable file, a syntax error, aliases
    that expand it beyond ``MAX_EXPANDED_VALUES``, nesting deeper than Python's recursion
    limit or a YTE template (``YTE_KEY``) raise ``error`` in one line naming the file (and the
    line)."""
    try:
        with open(path, encoding="utf-8") as f:
            return _refuse_template(path, yaml.load(f, Loader=_BoundedLoader), what, error)
    except OSError as err:
        raise error(f"{path}: cannot read the {what} ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise error(yaml_error_line(str(path), err)) from None
    except _ExpansionRefused as err:
        raise error(f"{path}, {err}") from None
    except RecursionError:  # PyYAML composes nested values recursively
        raise error(f"{path}: the {what} nests its values too deeply to read") from None
