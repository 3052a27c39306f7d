"""A two-cluster store and a learned-terms path in a temp dir, for the reader's and the
writer's tests (tests/router/test_learned.py, test_feedback.py)."""

import pytest

from router.store.clusterfile import parse_cluster_text
from router.store.learned import read_learned

STORE = """# test store

## Layer 0 - Cluster Router

- alpha \u00b7 2 \u00b7 tags: windows, powershell \u00b7 label: the Windows box
- beta \u00b7 1 \u00b7 tags: invoices \u00b7 label: billing

## Layer 1 - Member Lines

### alpha
- env_setx_path - env; setx writes the registry, the Bash tool never sees it
- env_crlf - env; git autocrlf false on the box

### beta
- project_pdf_renderer - project; the PDF renderer uses a thread pool of four
"""


@pytest.fixture
def index():
    return parse_cluster_text(STORE, "clusters.md")


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "clusters.learned.tsv")


def terms(path, slug=None):
    return [r.term for r in read_learned(path) if slug is None or r.slug == slug]
