"""benchmarks/transfer_cv.py: which stores it may read, its objective's order, and that a store's
leave-one-store-out figure comes from a point chosen without it."""

import pathlib

import pytest

from support.benchscript import load_benchmark


@pytest.fixture(scope="module")
def cv():
    return load_benchmark("transfer_cv")


def fig(recall, priming=0.0, below=None, para=0.5, chars=200.0):
    return {"fact_recall": recall, "false_priming": priming, "below_plain": below or {},
            "paraphrase_recall": para, "routed_chars": chars}


@pytest.mark.parametrize("better, worse", [
    ([fig(0.5), fig(0.5)], [fig(0.9), fig(0.9, priming=0.10)]),            # every store under the bound first
    ([fig(0.5), fig(0.5)], [fig(0.9), fig(0.9, below={"direct": 0.02})]),  # no kind below plain
    ([fig(0.9, priming=0.09)], [fig(0.9, priming=0.20)]),                  # infeasible: the least excess
    ([fig(0.6), fig(0.6)], [fig(0.95), fig(0.55)]),                        # then the worst store's recall
    ([fig(0.6), fig(0.9)], [fig(0.6), fig(0.8)]),                          # then the mean
    ([fig(0.6, para=0.4)], [fig(0.6, para=0.3)]),                          # then paraphrases
    ([fig(0.6, chars=180)], [fig(0.6, chars=220)]),                        # then fewer characters
])
def test_the_objective_orders_points_as_documented(cv, better, worse):
    assert cv.objective(better, 1) > cv.objective(worse, 0)


def test_the_held_out_stores_never_enter_the_pool(cv, tmp_path):
    for name, readme in (("neovim", "# neovim\n"), ("flutter", ""), ("zig", "# zig\n\n**Held out: never used"),
                         ("rails", "# rails\nThe other stores may be used; this one is not held out.\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "README.md").write_text(readme)
    assert [cv.held_out(str(tmp_path / n)) for n in ("neovim", "flutter", "zig", "rails")] == [True, True, True, False]
    names = {pathlib.Path(d).name for d in cv.realwording_dirs()}
    assert not names & {"neovim", "flutter", "heldout", "heldout2"}


class FakeRouter:
    """Two points x three stores: point 1 is best on stores a and b, point 0 on store c alone."""

    recalls = {("a", 0): 0.5, ("b", 0): 0.5, ("c", 0): 0.9, ("a", 1): 0.9, ("b", 1): 0.9, ("c", 1): 0.1}

    def route(self, store, settings, plain=False):
        from collections import namedtuple

        case = namedtuple("C", "id silent injects tags routes_to")
        point = 0 if plain else settings["veto_k"] - 1
        hits = round(self.recalls[(store.name, point)] * 10)
        return [store.row(case(f"{store.name}{i}", False, ("m",), ("member",), ("x",)), ("x",),
                          ("m",) if i < hits else (), 100) for i in range(10)]


def test_a_store_is_judged_at_the_point_chosen_on_the_others(cv):
    class S:
        def __init__(self, name):
            self.name, self.utterances, self.near_misses, self.cases = name, {"m": ("u",)}, {}, []
            self.row = cv.Row

    stores = [S("a"), S("b"), S("c")]
    points = [dict(cv.LANDED, veto_k=1), dict(cv.LANDED, veto_k=2)]
    report = cv.run(stores, points, FakeRouter(), objective_version=1)
    by_store = {row["store"]: row for row in report["leave_one_store_out"]}
    assert by_store["c"]["chosen"]["veto_k"] == 2 and by_store["c"]["held_out"]["fact_recall"] == pytest.approx(0.1)
    assert by_store["a"]["chosen"]["veto_k"] == 1    # on b and c: point 2 loses c's plain hits
    assert report["spread"]["worst_fact_recall"] == pytest.approx(0.1)


def test_objective_v2_allows_what_the_landed_defaults_already_do_and_no_more(cv):
    landed = [fig(0.5, priming=0.20, below={"member": 0.05})]
    same = [fig(0.6, priming=0.20, below={"member": 0.05})]
    worse = [fig(0.9, priming=0.25)]
    lost_more = [fig(0.9, priming=0.20, below={"member": 0.10})]
    assert cv.objective(same, 1, landed)[0] and not cv.objective(same, 1)[0]
    assert not cv.objective(worse, 1, landed)[0] and not cv.objective(lost_more, 1, landed)[0]
    assert cv.objective(same, 0, landed) > cv.objective(worse, 1, landed)
    # where landed meets the absolute bound, the bound holds
    assert not cv.objective([fig(0.9, priming=0.09)], 1, [fig(0.5, priming=0.02)])[0]
