"""How `make bench` states a budget: the figure, the budget, and whether it was met."""


def judged(value: float, budget: float, unit: str = "s") -> str:
    """'2.61 s (budget 3 s: met)'."""
    verdict = "met" if value <= budget else "MISSED"
    return f"{value:7.2f} {unit}  (budget {budget:g} {unit}: {verdict})"
