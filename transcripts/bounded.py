"""A list that keeps the first ``limit`` items offered and counts them all: what grows with the
file (evidence, notes, listed injections) is counted exactly and held only up to a bound."""

from transcripts.auditmodel import MAX_EVIDENCE


class Bounded(list):
    """Evidence kept up to ``limit`` items, with ``total`` counting every one offered, so a check
    can say "3,412 lines repeat an injection" while holding the first MAX_EVIDENCE of them."""

    def __init__(self, limit=MAX_EVIDENCE):
        super().__init__()
        self.limit = limit
        self.total = 0

    def add(self, item):
        self.total += 1
        if len(self) < self.limit:
            self.append(item)

    def offer(self, make, *args):
        """``add(make(*args))``, building the item only while it would be kept: past the limit
        an item is counted, and the work of making it is saved."""
        self.total += 1
        if len(self) < self.limit:
            self.append(make(*args))
