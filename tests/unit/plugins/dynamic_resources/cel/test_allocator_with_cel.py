"""The allocator's cases (test_allocator.py) again, with the real CEL selector cache instead of the
stub, so every expression those cases use is compiled and evaluated by CEL; the results and error
messages must be the same."""

from __future__ import annotations

import pytest

from kubesched.plugins.dynamic_resources.cel.cache import Cache, CelSelectorCache
from tests.unit.plugins.dynamic_resources.allocator_fixtures import Case, run
from tests.unit.plugins.dynamic_resources.test_allocator import CASES

# One cache for the whole module, as kube-scheduler keeps one for its plugin: expressions are
# compiled once and shared by every case that uses them.
_CACHE = Cache(max_entries=64)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_allocator_with_cel(case: Case) -> None:
    run(case, CelSelectorCache(_CACHE))
