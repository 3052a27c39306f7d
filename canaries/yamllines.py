"""YAML read with the line of every mapping, key, value and list item, so each problem in a suite
is reported as file:line."""


from canaries.cases import Problem


class LocatedMap(dict):
    """A YAML mapping that remembers the 1-based line of itself, of each key and of each value."""

    line = None
    key_lines = None
    value_lines = None


class LocatedList(list):
    line = None
    item_lines = None


def _loader_class():
    import yaml

    # libyaml is ~10x faster, but a re-imported ``yaml`` (pytester restores sys.modules between
    # in-process runs) no longer shares its node classes with the C extension, which cannot be
    # re-imported; the tag resolver then fails. Use it only while the two agree.
    fast = getattr(yaml, "CSafeLoader", None)
    c_module = getattr(yaml, "_yaml", None)
    if fast is not None and getattr(c_module, "ScalarNode", None) is yaml.ScalarNode:
        return fast
    return yaml.SafeLoader


def compose_located(text, problems):
    """Parse YAML ``text`` into plain values whose mappings and lists know their lines.

    Returns ``None`` (after adding a problem) if the text is not valid YAML.
    """
    import yaml

    loader = _loader_class()(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as err:
            problems.append(_yaml_problem(err, text))
            return None
        except yaml.YAMLError as err:
            problems.append(Problem(None, None, f"invalid YAML: {err}", "correct the YAML syntax"))
            return None
        except RecursionError:
            # The pure-Python composer recurses once per nesting level (libyaml stops at 1000).
            problems.append(Problem(None, None, f"invalid YAML: nested more than {MAX_DEPTH} levels deep",
                                    "flatten the structure"))
            return None
        if node is None:
            return None
        bound_problem = expansion_problem(node)
        if bound_problem is not None:
            problems.append(bound_problem)
            return None
        try:
            return _convert(loader, node, problems)
        except yaml.MarkedYAMLError as err:
            mark = err.problem_mark or err.context_mark
            problems.append(Problem(mark.line + 1 if mark else None, mark.column + 1 if mark else None,
                                    f"invalid YAML: {err.problem or err}", "correct the YAML value"))
            return None
    finally:
        loader.dispose()


# A suite is a few hundred cases; these bounds are orders of magnitude above any real one and
# far below what exhausts memory. Aliases re-use a node without copying it in the composed
# graph, but converting it to plain values copies it at every use: nine levels of nine aliases
# each ("billion laughs") compose to ~90 nodes and convert to 9**9.
MAX_ALIAS_EXPANSION = 100_000  # converted nodes beyond the distinct ones in the file
MAX_DEPTH = 200


def _children(node):
    if node.id == "mapping":
        return [child for pair in node.value for child in pair]
    if node.id == "sequence":
        return node.value
    return ()


def expansion_problem(root):
    """A Problem if converting the composed graph ``root`` would recurse (an alias inside its
    own anchor), nest deeper than MAX_DEPTH or expand aliases past MAX_ALIAS_EXPANSION; else None.

    One post-order pass over the distinct nodes (memoised by identity), never over the expansion,
    so a bomb is measured in the time it takes to read it.
    """
    expanded = {}   # id(node) -> nodes it converts to, counting every alias use
    distinct = 0
    on_path = set()
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            expanded[key] = 1 + sum(expanded[id(child)] for child in _children(node))
            distinct += 1
            if expanded[key] > distinct + MAX_ALIAS_EXPANSION:
                return _node_problem(node, f"anchors and aliases expand this value to more than "
                                           f"{MAX_ALIAS_EXPANSION:,} copied values",
                                     "write the values out, or nest fewer aliases")
            continue
        if key in expanded:
            continue
        if key in on_path:
            return _node_problem(node, "an alias refers to the anchor that contains it (a recursive value)",
                                 "remove the alias from inside its own anchor")
        if len(on_path) >= MAX_DEPTH:
            return _node_problem(node, f"nested more than {MAX_DEPTH} levels deep", "flatten the structure")
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                return _node_problem(child, "an alias refers to the anchor that contains it (a recursive "
                                            "value)", "remove the alias from inside its own anchor")
            if id(child) not in expanded:
                stack.append((child, False))
    return None


def _node_problem(node, message, fix):
    mark = node.start_mark
    return Problem(mark.line + 1, mark.column + 1, f"invalid YAML: {message}", fix)


def _yaml_problem(err, text):
    mark = err.problem_mark or err.context_mark
    message = str(err.problem or err.context or "invalid YAML")
    if err.context and err.problem and err.context_mark is not None:
        message += f" ({err.context} on line {err.context_mark.line + 1})"
    line = column = None
    if mark is not None:
        # A problem found at the end of the input is reported on the last line, not past it.
        last_line = max(1, len(text.splitlines()))
        line = min(mark.line + 1, last_line)
        column = mark.column + 1 if mark.line + 1 <= last_line else None
    return Problem(line, column, f"invalid YAML: {message}", "correct the YAML syntax")


def _convert(loader, node, problems):
    # Dispatch on ``node.id``, not isinstance: libyaml's C parser keeps the node classes of the
    # first ``import yaml``, which differ from a re-imported module's (pytester does that).
    line = node.start_mark.line + 1
    if node.id == "mapping":
        loader.flatten_mapping(node)
        result = LocatedMap()
        result.line = line
        result.key_lines = {}
        result.value_lines = {}
        for key_node, value_node in node.value:
            key = _convert(loader, key_node, problems)
            key_line = key_node.start_mark.line + 1
            try:
                hash(key)
            except TypeError:
                problems.append(Problem(key_line, key_node.start_mark.column + 1,
                                        "a mapping key must be a plain word", "write 'key: value'"))
                continue
            if key in result:
                problems.append(Problem(key_line, key_node.start_mark.column + 1,
                                        f"duplicate key {key!r} (first on line {result.key_lines[key]})",
                                        "keep one of them"))
                continue
            result[key] = _convert(loader, value_node, problems)
            result.key_lines[key] = key_line
            result.value_lines[key] = value_node.start_mark.line + 1
        return result
    if node.id == "sequence":
        result = LocatedList()
        result.line = line
        result.item_lines = []
        for item in node.value:
            result.append(_convert(loader, item, problems))
            result.item_lines.append(item.start_mark.line + 1)
        return result
    if node.tag == STR_TAG:
        return node.value  # the common case, without the constructor's bookkeeping
    return loader.construct_object(node, deep=True)


STR_TAG = "tag:yaml.org,2002:str"
