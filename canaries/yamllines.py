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
        if node is None:
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
