"""Provider names: the built-ins and the ``package.module:factory`` form. A leaf module, so the
config validator and the provider loader share one rule without importing each other."""

BUILTINS = ("null", "spec", "weighted")


class ProviderError(Exception):
    """A provider that cannot be loaded or that returned something unusable."""


def parse_provider_name(name):
    """``(module, attribute)`` of ``package.module:factory``; ``ProviderError`` if malformed."""
    if not isinstance(name, str) or name.count(":") != 1:
        raise ProviderError(f"provider {name!r} is neither a built-in ({', '.join(BUILTINS)}) nor "
                            "'package.module:factory'")
    module, attribute = name.split(":")
    parts = module.split(".") + [attribute]
    if not all(part.isidentifier() for part in parts):
        raise ProviderError(f"provider {name!r} is not 'package.module:factory' (dotted Python names)")
    return module, attribute
