"""Reading the typed fields of a located YAML mapping (``canaries.yamllines``) for a suite
check: a string, a list of strings, a whole number, a number, a boolean, an id, unknown keys.
Each wrong value becomes a ``Problem`` on the line it sits on, with a fix, and the reading goes on,
so one pass reports every problem of a suite.

Apart from ``canaries.schema`` (what a suite, a case and a session must hold) because these
checks know nothing of the schema: they are the vocabulary its rules are written in.
"""

from canaries.cases import ID_RE, Problem


def type_name(value):
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


class Checker:
    """Validates one parsed suite; collects problems instead of stopping at the first."""

    def __init__(self, problems):
        self.problems = problems

    def add(self, line, message, fix=None):
        self.problems.append(Problem(line, None, message, fix))

    def string(self, mapping, key, *, required=False, what=None):
        if key not in mapping:
            if required:
                self.add(mapping.line, f"{what or 'entry'} has no '{key}'", f"add '{key}: ...'")
            return None
        value = mapping[key]
        if not isinstance(value, str) or not value.strip():
            self.add(mapping.value_lines[key], f"'{key}' must be a non-empty string, got {type_name(value)}",
                     f"write '{key}: \"text\"'")
            return None
        return value

    def string_list(self, mapping, key, *, allow_empty=False):
        """A string or a list of strings -> list of (value, line); ``None`` if absent or invalid."""
        if key not in mapping:
            return None
        value = mapping[key]
        line = mapping.value_lines[key]
        if isinstance(value, str) and value.strip():
            return [(value, line)]
        if not isinstance(value, list):
            self.add(line, f"'{key}' must be a string or a list of strings, got {type_name(value)}",
                     f"write '{key}: [a, b]'")
            return None
        if not value and not allow_empty:
            fix = "write 'silent: true' to expect no route" if key == "routes_to" else f"name at least one, or remove '{key}'"
            self.add(line, f"'{key}' is an empty list", fix)
            return None
        items = []
        seen = set()
        ok = True
        for item, item_line in zip(value, value.item_lines):
            if not isinstance(item, str) or not item.strip():
                self.add(item_line, f"'{key}' items must be non-empty strings, got {type_name(item)}",
                         "quote the item")
                ok = False
            elif item in seen:
                self.add(item_line, f"{item!r} is listed twice in '{key}'", "remove the repeat")
                ok = False
            else:
                seen.add(item)
                items.append((item, item_line))
        return items if ok else None

    def integer(self, mapping, key):
        if key not in mapping:
            return None
        value = mapping[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.add(mapping.value_lines[key], f"'{key}' must be a whole number >= 0, got {type_name(value)}",
                     f"write '{key}: 12'")
            return None
        return value

    def number(self, mapping, key):
        if key not in mapping:
            return None
        value = mapping[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            self.add(mapping.value_lines[key], f"'{key}' must be a number >= 0, got {type_name(value)}",
                     f"write '{key}: 2'")
            return None
        return value

    def boolean(self, mapping, key):
        if key not in mapping:
            return None
        value = mapping[key]
        if not isinstance(value, bool):
            self.add(mapping.value_lines[key], f"'{key}' must be true or false, got {type_name(value)}",
                     f"write '{key}: true'")
            return None
        return value

    def unknown_keys(self, mapping, known, what):
        for key in mapping:
            if key not in known:
                self.add(mapping.key_lines[key], f"unknown key {key!r} in {what}",
                         "use one of: " + ", ".join(known))

    def case_id(self, mapping, seen_ids, what):
        case_id = self.string(mapping, "id", required=True, what=what)
        if case_id is None:
            return None
        line = mapping.value_lines["id"]
        if not ID_RE.match(case_id):
            self.add(line, f"invalid id {case_id!r}",
                     "use letters, digits, '_', '.' and '-', starting with a letter or digit")
            return None
        if case_id in seen_ids:
            self.add(line, f"duplicate id {case_id!r} (first on line {seen_ids[case_id]})", "give each case its own id")
            return None
        seen_ids[case_id] = line
        return case_id
